//! One SSH connection: who it is (public key only, checked against the files on every attempt),
//! and what it may open — a session with a pty showing the TUI, nothing else. `exec`, a
//! subsystem (sftp), a shell without a pty, forwarding of ports, agent or X11 are refused with
//! one line. Each session's work happens in its own task (`session::run`); this handler only
//! passes the client's bytes and sizes on, so a slow viewer never holds the connection up.
//!
//! Everything a client sends is bounded before anything is allocated for it: a pty or window
//! size is clamped to `MAX_COLS` × `MAX_ROWS`; a storm of window changes keeps only the newest
//! size (drawn at most once a frame); bytes the session has no room for are read and dropped,
//! never queued; a connection opens at most `MAX_CHANNELS` sessions.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

use russh::keys::PublicKey;
use russh::server::{Auth, ChannelOpenHandle, Handler, Msg, Session, VerifiedPublicKey};
use russh::{Channel, ChannelId, ChannelOpenFailure};
use tokio::sync::{mpsc, watch};

use super::key_files::{Standing, fingerprint};
use super::session::{self, Start};
use super::size::Size;
use super::{Shared, ViewerSlot};
use crate::engine::Principal;

/// Chunks of the client's bytes waiting for its session task; beyond, they are dropped.
const FROM_CLIENT_QUEUED: usize = 64;
/// Session channels one connection may have open (OpenSSH's `MaxSessions` is 10).
const MAX_CHANNELS: usize = 4;
/// A key's comment is a name on a status line, not a document.
const COMMENT_CHARS: usize = 64;

pub struct Connection {
    shared: Arc<Shared>,
    peer: Option<SocketAddr>,
    /// Its place among the connections still authenticating (`admission::Startups`).
    startup: u64,
    who: Option<Who>,
    channels: HashMap<ChannelId, Pending>,
}

/// An authenticated connection's key, and its place among the authenticated.
struct Who {
    key: PublicKey,
    principal: Principal,
    standing: Standing,
    _slot: ViewerSlot,
}

/// A session channel, before and after its TUI starts.
#[derive(Default)]
struct Pending {
    writer: Option<Box<dyn tokio::io::AsyncWrite + Send + Unpin>>,
    pty: Option<(String, Size)>,
    no_color: bool,
    to_session: Option<mpsc::Sender<Vec<u8>>>,
    size: Option<watch::Sender<Size>>,
    /// Bytes dropped for want of room (said once in the log).
    dropped: u64,
}

impl Connection {
    pub fn new(shared: Arc<Shared>, peer: Option<SocketAddr>, startup: u64) -> Self {
        Self {
            shared,
            peer,
            startup,
            who: None,
            channels: HashMap::new(),
        }
    }

    fn who_name(&self) -> Option<String> {
        self.who.as_ref().map(|w| w.principal.name())
    }

    /// A refused login, said once a minute per source address.
    fn refused_login(&self, user: &str, key: &PublicKey, why: &str) {
        let now = std::time::Instant::now();
        if let Some(unsaid) = self
            .shared
            .failures
            .should_log(self.peer.map(|p| p.ip()), now)
        {
            tracing::warn!(
                peer = %self.peer(),
                user = %crate::sanitize::one_line(user),
                key = %fingerprint(key),
                not_said_since = unsaid,
                "{why}"
            );
        }
    }

    fn peer(&self) -> String {
        self.peer.map_or("-".into(), |p| p.to_string())
    }

    /// Says no in one line on the channel's stderr, and closes it.
    fn refuse(&mut self, channel: ChannelId, why: &str, session: &mut Session) {
        tracing::info!(peer = %self.peer(), who = ?self.who_name(), "refused: {why}");
        let line = format!("gantry serve: {why}\r\n");
        let _ = session.extended_data(channel, 1, line.into_bytes());
        let _ = session.exit_status_request(channel, 1);
        let _ = session.eof(channel);
        let _ = session.close(channel);
        self.channels.remove(&channel);
    }
}

const NO_COMMANDS: &str =
    "this server shows Gantry's TUI and runs no commands: ssh -t to it, with no command";

impl Handler for Connection {
    type Error = russh::Error;

    async fn auth_publickey_offered(
        &mut self,
        user: &str,
        offer: russh::server::PublicKeyOffer<'_>,
    ) -> Result<Auth, Self::Error> {
        // Saves the client a signature for a key that would be refused anyway.
        Ok(match self.shared.standing_of(offer.public_key, true) {
            Some(_) => Auth::Accept,
            None => {
                self.refused_login(
                    user,
                    offer.public_key,
                    "refused a key not in the authorized keys",
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
        let Some((standing, comment)) = self.shared.standing_of(key.public_key, true) else {
            self.refused_login(
                user,
                key.public_key,
                "refused a key not in the authorized keys",
            );
            return Ok(Auth::reject());
        };
        // Cut meanwhile (its grace ran out, or it was the oldest at the cap): too late.
        if !self.shared.startups.leave(self.startup) {
            return Ok(Auth::reject());
        }
        let Some(slot) = self.shared.take_authenticated() else {
            tracing::warn!(peer = %self.peer(), key = %print, "refused: too many connections");
            return Ok(Auth::reject());
        };
        let principal = Principal::Key {
            fingerprint: print.clone(),
            comment: comment.chars().take(COMMENT_CHARS).collect(),
        };
        // The user name a client sends is its own choice: logged, never taken as who it is.
        tracing::info!(
            peer = %self.peer(),
            user = %crate::sanitize::one_line(user),
            key = %print,
            name = %principal,
            ?standing,
            "connected"
        );
        self.who = Some(Who {
            key: key.public_key.clone(),
            principal,
            standing,
            _slot: slot,
        });
        Ok(Auth::Accept)
    }

    async fn channel_open_session(
        &mut self,
        channel: Channel<Msg>,
        reply: ChannelOpenHandle,
        _session: &mut Session,
    ) -> Result<(), Self::Error> {
        if self.channels.len() >= MAX_CHANNELS {
            tracing::info!(peer = %self.peer(), who = ?self.who_name(), "refused a session: {MAX_CHANNELS} open on this connection");
            reply.reject(ChannelOpenFailure::ResourceShortage).await;
            return Ok(());
        }
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
        match self.channels.get_mut(&channel) {
            Some(p) if p.to_session.is_none() => {
                let term: String = term.chars().take(64).collect();
                p.pty = Some((term, Size::clamped(col_width, row_height)));
                session.channel_success(channel)?;
            }
            _ => session.channel_failure(channel)?,
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
        let Some(who) = &self.who else {
            session.channel_failure(channel)?;
            return Ok(());
        };
        let (key, principal, standing) = (who.key.clone(), who.principal.clone(), who.standing);
        let Some(pending) = self.channels.get_mut(&channel) else {
            session.channel_failure(channel)?;
            return Ok(());
        };
        if pending.to_session.is_some() {
            session.channel_failure(channel)?;
            return Ok(());
        }
        let Some((term, size)) = pending.pty.clone() else {
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
        let (size_tx, size_rx) = watch::channel(size);
        pending.to_session = Some(to_session);
        pending.size = Some(size_tx);
        let start = Start {
            key,
            principal,
            standing,
            size: size_rx,
            no_color: pending.no_color,
            term,
            stop: self.shared.stop.child_token(),
            slot,
        };
        session.channel_success(channel)?;
        let shared = self.shared.clone();
        let handle = session.handle();
        self.shared.sessions.spawn(async move {
            let status = session::run(shared, start, writer, from_client).await;
            let _ = handle.exit_status_request(channel, status).await;
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
        let peer = self.peer();
        let Some(p) = self.channels.get_mut(&channel) else {
            return Ok(());
        };
        let Some(to) = &p.to_session else {
            return Ok(());
        };
        // Read and dropped when the session has no room: a paste of 100 MB costs its reading,
        // never its size.
        if to.try_send(data.to_vec()).is_err() {
            if p.dropped == 0 {
                tracing::info!(peer = %peer, "a client sends faster than its session reads: input dropped");
            }
            p.dropped += data.len() as u64;
        }
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
        // Only the newest size is kept: a storm of changes is one redraw.
        if let Some(size) = self.channels.get(&channel).and_then(|p| p.size.as_ref()) {
            size.send_replace(Size::clamped(col_width, row_height));
        }
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
            p.size = None;
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
        if let Some(who) = &self.who {
            tracing::info!(peer = %self.peer(), who = %who.principal, key = %fingerprint(&who.key), "disconnected");
        }
    }
}
