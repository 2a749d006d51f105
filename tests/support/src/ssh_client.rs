//! An SSH client of the tests' own, on russh: for what the real OpenSSH client will not do — a
//! 60000×60000 pty, a thousand window changes a second, bytes without end — so `gantry serve`
//! can be tried as a hostile teammate would. What it shows is read through a vt100 emulator.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use russh::client::{self, Handle, Msg};
use russh::keys::{PrivateKeyWithHashAlg, load_secret_key};
use russh::{Channel, ChannelMsg};

/// Only a guard against a server that never answers.
const HANG_GUARD: Duration = crate::WAIT_BOUND;

struct AnyHost;

impl client::Handler for AnyHost {
    type Error = russh::Error;

    async fn check_server_key(
        &mut self,
        _key: &russh::keys::PublicKeyOrCertificate,
    ) -> Result<bool, Self::Error> {
        Ok(true)
    }
}

pub struct RawClient {
    handle: Handle<AnyHost>,
}

/// A session with a pty and the TUI in it, and what it has shown so far.
pub struct RawSession {
    pub channel: Channel<Msg>,
    pub screen: vt100::Parser,
    pub exit_status: Option<u32>,
    pub closed: bool,
}

impl RawClient {
    /// Connects to `127.0.0.1:port` and logs in with the private key at `key`.
    pub async fn login(port: u16, key: &Path) -> RawClient {
        let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
        let config = Arc::new(client::Config {
            inactivity_timeout: Some(HANG_GUARD),
            ..Default::default()
        });
        let mut handle = tokio::time::timeout(
            HANG_GUARD,
            client::connect(config, ("127.0.0.1", port), AnyHost),
        )
        .await
        .expect("the server answers")
        .expect("the SSH handshake");
        let key = load_secret_key(key, None).unwrap();
        let auth = handle
            .authenticate_publickey("anyone", PrivateKeyWithHashAlg::new(Arc::new(key), None))
            .await
            .unwrap();
        assert!(auth.success(), "the key logs in");
        RawClient { handle }
    }

    /// Opens a session with a pty of `cols` × `rows` (as the client says, however large) and
    /// the TUI in it; the emulator is `screen` in size.
    pub async fn tui(&self, cols: u32, rows: u32, screen: (u16, u16)) -> RawSession {
        let channel = self.handle.channel_open_session().await.unwrap();
        channel
            .request_pty(true, "xterm-256color", cols, rows, 0, 0, &[])
            .await
            .unwrap();
        channel.request_shell(true).await.unwrap();
        RawSession {
            channel,
            screen: vt100::Parser::new(nz(screen.1), nz(screen.0), 0),
            exit_status: None,
            closed: false,
        }
    }

    /// Opens sessions until the server refuses one; how many it let open.
    pub async fn open_sessions(&self, at_most: usize) -> usize {
        let mut open = Vec::new();
        for _ in 0..at_most {
            match self.handle.channel_open_session().await {
                Ok(c) => open.push(c),
                Err(_) => break,
            }
        }
        open.len()
    }
}

impl RawSession {
    /// Reads what the server sends until the emulated screen shows every one of `wanted`.
    pub async fn wait_for(&mut self, wanted: &[&str]) -> String {
        let deadline = tokio::time::Instant::now() + HANG_GUARD;
        loop {
            let text = self.screen.screen().contents();
            if wanted.iter().all(|w| text.contains(w)) {
                return text;
            }
            assert!(
                !self.closed,
                "the session ended without showing {wanted:?}:\n{text}"
            );
            match tokio::time::timeout_at(deadline, self.channel.wait()).await {
                Ok(message) => self.take(message),
                Err(_) => panic!("the screen never showed {wanted:?}:\n{text}"),
            }
        }
    }

    /// Reads for at most `bound`; whether the screen then shows every one of `wanted`.
    pub async fn shows_within(&mut self, wanted: &[&str], bound: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + bound;
        loop {
            let text = self.screen.screen().contents();
            if wanted.iter().all(|w| text.contains(w)) {
                return true;
            }
            match tokio::time::timeout_at(deadline, self.channel.wait()).await {
                Ok(message) if !self.closed => self.take(message),
                _ => return false,
            }
        }
    }

    /// Reads until the server closes the session; its exit status.
    pub async fn wait_for_end(&mut self) -> Option<u32> {
        let deadline = tokio::time::Instant::now() + HANG_GUARD;
        while !self.closed {
            match tokio::time::timeout_at(deadline, self.channel.wait()).await {
                Ok(message) => self.take(message),
                Err(_) => panic!("the session never ended"),
            }
        }
        self.exit_status
    }

    /// Sends `bytes` as typed input while reading what the server sends meanwhile: a client
    /// that only writes fills its queue of what it was sent, stops reading the socket, and never
    /// sees the server open its window again. Bounded: panics if the server has not taken them
    /// all within the guard.
    pub async fn send(&mut self, bytes: &[u8]) {
        use tokio::io::AsyncWriteExt;
        let mut writer = self.channel.make_writer();
        let write = async move {
            writer.write_all(bytes).await?;
            writer.flush().await
        };
        tokio::pin!(write);
        let deadline = tokio::time::Instant::now() + HANG_GUARD;
        loop {
            tokio::select! {
                written = &mut write => {
                    written.unwrap();
                    return;
                }
                message = self.channel.wait(), if !self.closed => self.take(message),
                _ = tokio::time::sleep_until(deadline) => {
                    panic!("the server did not take {} bytes within {HANG_GUARD:?}", bytes.len())
                }
            }
        }
    }

    /// Tells the server the window is now `cols`×`rows`. Bounded: panics if the server has not
    /// taken it within the guard.
    pub async fn resize(&mut self, cols: u32, rows: u32) {
        tokio::time::timeout(HANG_GUARD, self.channel.window_change(cols, rows, 0, 0))
            .await
            .expect("the server did not take a window change within the guard")
            .unwrap();
    }

    /// Takes what the server has sent so far, without waiting for more.
    pub async fn drain(&mut self) {
        while !self.closed {
            match tokio::time::timeout(Duration::ZERO, self.channel.wait()).await {
                Ok(message) => self.take(message),
                Err(_) => return,
            }
        }
    }

    fn take(&mut self, message: Option<ChannelMsg>) {
        match message {
            Some(ChannelMsg::Data { data }) => self.screen.process(&data),
            Some(ChannelMsg::ExtendedData { data, .. }) => self.screen.process(&data),
            Some(ChannelMsg::ExitStatus { exit_status }) => self.exit_status = Some(exit_status),
            Some(ChannelMsg::Close) | None => self.closed = true,
            Some(_) => {}
        }
    }
}

fn nz(n: u16) -> std::num::NonZeroU16 {
    std::num::NonZeroU16::new(n.max(1)).unwrap()
}
