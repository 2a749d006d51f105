//! One SSH connection: who it is (public key only, checked against the files on every attempt),
//! and what it may open — a session with a pty showing the TUI, nothing else. `exec`, a
//! subsystem (sftp), a shell without a pty, forwarding of ports, agent or X11 are refused with
//! one line. Each session's work happens in its own task (`session::run`); this handler only
//! passes the client's bytes and sizes on, so a slow viewer never holds the connection up.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

use russh::keys::PublicKey;
use russh::server::{Auth, ChannelOpenHandle, Handler, Msg, Session, VerifiedPublicKey};
use russh::{Channel, ChannelId};
use tokio::sync::mpsc;

use super::Shared;
use super::keys::{Standing, fingerprint};
use super::session::{self, FromClient, Start};

/// Messages from the client waiting for its session task; beyond, the connection waits (and
/// with it, through SSH's window, the client).
const FROM_CLIENT_QUEUED: usize = 64;

pub struct Connection {
    shared: Arc<Shared>,
    peer: Option<SocketAddr>,
    who: Option<(String, Standing)>,
    channels: HashMap<ChannelId, Pending>,
}

/// A session channel, before and after its TUI starts.
#[derive(Default)]
struct Pending {
    writer: Option<Box<dyn tokio::io::AsyncWrite + Send + Unpin>>,
    pty: Option<(String, u16, u16)>,
    no_color: bool,
    to_session: Option<mpsc::Sender<FromClient>>,
}

impl Connection {
    pub fn new(shared: Arc<Shared>, peer: Option<SocketAddr>) -> Self {
        Self {
            shared,
            peer,
            who: None,
            channels: HashMap::new(),
        }
    }

    fn peer(&self) -> String {
        self.peer.map_or("-".into(), |p| p.to_string())
    }

    /// Says no in one line on the channel's stderr, and closes it.
    fn refuse(&mut self, channel: ChannelId, why: &str, session: &mut Session) {
        tracing::info!(peer = %self.peer(), who = ?self.who.as_ref().map(|w| &w.0), "refused: {why}");
        let line = format!("gantry serve: {why}\r\n");
        let _ = session.extended_data(channel, 1, line.into_bytes());
        let _ = session.exit_status_request(channel, 1);
        let _ = session.eof(channel);
        let _ = session.close(channel);
        self.channels.remove(&channel);
    }

    /// Hands the client's bytes or size to its session's task, once the TUI runs there.
    fn forward(
        &self,
        channel: ChannelId,
        message: FromClient,
    ) -> impl Future<Output = ()> + Send + use<> {
        let to = self
            .channels
            .get(&channel)
            .and_then(|p| p.to_session.clone());
        async move {
            if let Some(to) = to {
                let _ = to.send(message).await;
            }
        }
    }

    fn standing_of(&self, key: &PublicKey) -> Option<Standing> {
        if self
            .shared
            .operators
            .as_ref()
            .is_some_and(|o| o.contains(key))
        {
            Some(Standing::Operator)
        } else if self.shared.authorized.contains(key) {
            Some(Standing::Viewer)
        } else {
            None
        }
    }
}

/// A u32 size from the client as a screen dimension.
fn dim(n: u32) -> u16 {
    u16::try_from(n).unwrap_or(u16::MAX)
}

const NO_COMMANDS: &str =
    "this server shows Gantry's TUI and runs no commands: ssh -t to it, with no command";

impl Handler for Connection {
    type Error = russh::Error;

    async fn auth_publickey_offered(
        &mut self,
        _user: &str,
        offer: russh::server::PublicKeyOffer<'_>,
    ) -> Result<Auth, Self::Error> {
        // Saves the client a signature for a key that would be refused anyway.
        Ok(match self.standing_of(offer.public_key) {
            Some(_) => Auth::Accept,
            None => {
                tracing::warn!(
                    peer = %self.peer(),
                    key = %fingerprint(offer.public_key),
                    "refused a key not in the authorized keys"
                );
                Auth::reject()
            }
        })
    }

    async fn auth_publickey(
        &mut self,
        user: &str,
        key: VerifiedPublicKey<'_>,
    ) -> Result<Auth, Self::Error> {
        let print = fingerprint(key.public_key);
        match self.standing_of(key.public_key) {
            Some(standing) => {
                tracing::info!(peer = %self.peer(), user, key = %print, ?standing, "connected");
                self.who = Some((format!("{user} {print}"), standing));
                Ok(Auth::Accept)
            }
            None => {
                tracing::warn!(peer = %self.peer(), user, key = %print, "refused a key not in the authorized keys");
                Ok(Auth::reject())
            }
        }
    }

    async fn channel_open_session(
        &mut self,
        channel: Channel<Msg>,
        reply: ChannelOpenHandle,
        _session: &mut Session,
    ) -> Result<(), Self::Error> {
        // Only the writer is kept: the client's bytes and requests come through this handler,
        // and an unread channel would hold the connection up.
        let pending = Pending {
            writer: Some(Box::new(channel.make_writer())),
            ..Default::default()
        };
        self.channels.insert(channel.id(), pending);
        reply.accept().await;
        Ok(())
    }

    async fn pty_request(
        &mut self,
        channel: ChannelId,
        term: &str,
        col_width: u32,
        row_height: u32,
        _pix_width: u32,
        _pix_height: u32,
        _modes: &[(russh::Pty, u32)],
        session: &mut Session,
    ) -> Result<(), Self::Error> {
        if let Some(p) = self.channels.get_mut(&channel) {
            p.pty = Some((term.to_string(), dim(col_width), dim(row_height)));
            session.channel_success(channel)?;
        } else {
            session.channel_failure(channel)?;
        }
        Ok(())
    }

    async fn env_request(
        &mut self,
        channel: ChannelId,
        variable_name: &str,
        variable_value: &str,
        _session: &mut Session,
    ) -> Result<(), Self::Error> {
        if variable_name == "NO_COLOR"
            && !variable_value.is_empty()
            && let Some(p) = self.channels.get_mut(&channel)
        {
            p.no_color = true;
        }
        Ok(())
    }

    async fn shell_request(
        &mut self,
        channel: ChannelId,
        session: &mut Session,
    ) -> Result<(), Self::Error> {
        let Some((who, standing)) = self.who.clone() else {
            session.channel_failure(channel)?;
            return Ok(());
        };
        let Some(pending) = self.channels.get_mut(&channel) else {
            session.channel_failure(channel)?;
            return Ok(());
        };
        let Some((term, cols, rows)) = pending.pty.clone() else {
            session.channel_success(channel)?;
            self.refuse(channel, "the TUI needs a terminal: ssh -t to it", session);
            return Ok(());
        };
        let Some(slot) = self.shared.take_slot() else {
            session.channel_success(channel)?;
            let why = format!(
                "{} viewers are watching already (--max-viewers); try again later",
                self.shared.max_viewers
            );
            self.refuse(channel, &why, session);
            return Ok(());
        };
        let Some(writer) = pending.writer.take() else {
            session.channel_failure(channel)?;
            return Ok(());
        };
        let (to_session, from_client) = mpsc::channel(FROM_CLIENT_QUEUED);
        pending.to_session = Some(to_session);
        let start = Start {
            who,
            standing,
            size: (cols, rows),
            no_color: pending.no_color,
            term,
            stop: self.shared.stop.child_token(),
            slot,
        };
        session.channel_success(channel)?;
        let shared = self.shared.clone();
        let handle = session.handle();
        self.shared.sessions.spawn(async move {
            session::run(shared, start, writer, from_client).await;
            let _ = handle.exit_status_request(channel, 0).await;
            let _ = handle.eof(channel).await;
            let _ = handle.close(channel).await;
        });
        Ok(())
    }

    async fn exec_request(
        &mut self,
        channel: ChannelId,
        _data: &[u8],
        session: &mut Session,
    ) -> Result<(), Self::Error> {
        session.channel_success(channel)?;
        self.refuse(channel, NO_COMMANDS, session);
        Ok(())
    }

    async fn subsystem_request(
        &mut self,
        channel: ChannelId,
        name: &str,
        session: &mut Session,
    ) -> Result<(), Self::Error> {
        session.channel_failure(channel)?;
        let why = format!("no subsystems here ({name} included): {NO_COMMANDS}");
        self.refuse(channel, &why, session);
        Ok(())
    }

    async fn x11_request(
        &mut self,
        channel: ChannelId,
        _single_connection: bool,
        _x11_auth_protocol: &str,
        _x11_auth_cookie: &str,
        _x11_screen_number: u32,
        session: &mut Session,
    ) -> Result<(), Self::Error> {
        session.channel_failure(channel)?;
        Ok(())
    }

    async fn data(
        &mut self,
        channel: ChannelId,
        data: &[u8],
        _session: &mut Session,
    ) -> Result<(), Self::Error> {
        self.forward(channel, FromClient::Bytes(data.to_vec()))
            .await;
        Ok(())
    }

    async fn window_change_request(
        &mut self,
        channel: ChannelId,
        col_width: u32,
        row_height: u32,
        _pix_width: u32,
        _pix_height: u32,
        _session: &mut Session,
    ) -> Result<(), Self::Error> {
        let resize = FromClient::Resize(dim(col_width), dim(row_height));
        self.forward(channel, resize).await;
        Ok(())
    }

    async fn channel_eof(
        &mut self,
        channel: ChannelId,
        _session: &mut Session,
    ) -> Result<(), Self::Error> {
        // The session's input ends: its viewer leaves.
        if let Some(p) = self.channels.get_mut(&channel) {
            p.to_session = None;
        }
        Ok(())
    }

    async fn channel_close(
        &mut self,
        channel: ChannelId,
        _session: &mut Session,
    ) -> Result<(), Self::Error> {
        self.channels.remove(&channel);
        Ok(())
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        if let Some((who, _)) = &self.who {
            tracing::info!(peer = %self.peer(), who = %who, "disconnected");
        }
    }
}
