//! Port forwarding over SPDY/3.1, the protocol kubectl speaks (client-go's `tools/portforward`
//! over apimachinery's `httpstream/spdy`, which is moby/spdystream): after a plain
//! `Upgrade: SPDY/3.1`, or carried in the binary messages of a WebSocket whose subprotocol is
//! `SPDY/3.1+portforward.k8s.io`. No maintained SPDY crate exists for Rust, so the framing is
//! here, only what port forwarding needs: the frames (`frame`), header blocks with SPDY's zlib
//! dictionary (`headers`, `dictionary`), the server side of a session (`session`) and one
//! forwarded connection (`pair`).

mod dictionary;
mod frame;
mod headers;
mod pair;
mod session;
#[cfg(test)]
mod session_tests;
#[cfg(test)]
mod tests;

pub use session::serve;
