//! The upload request body: shared chunks with an exact length, so `Content-Length` is sent
//! and nothing is copied (multipart head, the shared document prefix, the tail). Built by the
//! protocols, sent by the transport.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Frame, SizeHint};

/// A request body made of shared chunks, with an exact length (so `Content-Length` is sent
/// and nothing is copied): multipart head, the shared document prefix, the tail.
pub struct ChunkBody {
    chunks: [Option<Bytes>; 3],
    next: usize,
    remaining: u64,
}

impl ChunkBody {
    pub fn new(head: Bytes, shared: Bytes, tail: Bytes) -> ChunkBody {
        let remaining = (head.len() + shared.len() + tail.len()) as u64;
        ChunkBody {
            chunks: [Some(head), Some(shared), Some(tail)],
            next: 0,
            remaining,
        }
    }
    pub fn len(&self) -> u64 {
        self.remaining
    }
    pub fn is_empty(&self) -> bool {
        self.remaining == 0
    }
}

impl http_body::Body for ChunkBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        while self.next < self.chunks.len() {
            let i = self.next;
            self.next += 1;
            if let Some(c) = self.chunks[i].take() {
                if c.is_empty() {
                    continue;
                }
                self.remaining -= c.len() as u64;
                return Poll::Ready(Some(Ok(Frame::data(c))));
            }
        }
        Poll::Ready(None)
    }

    fn is_end_stream(&self) -> bool {
        self.remaining == 0
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.remaining)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    #[tokio::test]
    async fn chunk_body_has_exact_length() {
        let b = ChunkBody::new(
            Bytes::from_static(b"ab"),
            Bytes::new(),
            Bytes::from_static(b"cde"),
        );
        assert_eq!(http_body::Body::size_hint(&b).exact(), Some(5));
        let all = b.collect().await.unwrap().to_bytes();
        assert_eq!(&all[..], b"abcde");
    }
}
