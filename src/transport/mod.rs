//! Transport: how requests reach the repository, knowing nothing of any repository API.
//! Access-method files (`access`), the clients built from them (`client`), the per-worker
//! HTTP/1.1 upload fast path (`fast`), the route an upload takes and the node that served it
//! (`route`), connection counting (`counter`) and the zero-copy upload body (`body`).
//! Protocols build requests and bodies with these types; nothing here imports `protocol`.

pub mod access;
pub mod body;
pub mod client;
pub mod counter;
pub mod fast;
pub mod route;

pub use access::{AccessMethod, ConnectionPolicy, HttpVersion};
pub use body::ChunkBody;
pub use counter::ConnectionCounter;
