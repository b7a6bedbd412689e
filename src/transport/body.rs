//! The upload request body: shared chunks with an exact length, so `Content-Length` is sent
//! and nothing is copied (multipart head, the document's two shared chunks, the tail), or a real
//! file streamed from disk between the head and the tail in 64 KiB reads (never held whole in
//! memory). Built by the protocols, sent by the transport.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};
use http_body::{Frame, SizeHint};
use tokio::io::{AsyncRead, ReadBuf};

/// Read size when streaming a file.
const FILE_CHUNK: usize = 64 * 1024;

/// Files up to this size are read whole when the request is built, so their body is ready
/// like a fixture's and goes out in one write: streamed, every small file cost a blocking
/// thread hop per 64 KiB read and reached the server as a head without its content, then the
/// content (on the real OpenCMIS server, 1.3-1.5x the cost per document of generated content
/// of the same sizes). One read of a page-cached file takes microseconds; a cold one blocks
/// its runtime thread for one disk read, as opening the file already does.
const READ_WHOLE: u64 = 256 * 1024;

/// A file streamed as the middle of a body, with the length it must have.
struct FilePart {
    file: tokio::fs::File,
    left: u64,
}

/// A request body made of shared chunks, with an exact length (so `Content-Length` is sent
/// and nothing is copied): multipart head, the document's shared head and fill (or a file),
/// the tail.
pub struct ChunkBody {
    chunks: [Option<Bytes>; 4],
    /// Streamed in place of the middle chunks.
    file: Option<FilePart>,
    next: usize,
    remaining: u64,
}

impl ChunkBody {
    pub fn new(head: Bytes, shared: [Bytes; 2], tail: Bytes) -> ChunkBody {
        let [a, b] = shared;
        let remaining = (head.len() + a.len() + b.len() + tail.len()) as u64;
        ChunkBody {
            chunks: [Some(head), Some(a), Some(b), Some(tail)],
            file: None,
            next: 0,
            remaining,
        }
    }

    /// `head`, the `len` bytes of the file at `path` read as they are sent, then `tail`. A
    /// file that is shorter or longer when sent than `len` fails the upload (an I/O error).
    pub fn file(
        head: Bytes,
        path: &std::path::Path,
        len: u64,
        tail: Bytes,
    ) -> std::io::Result<ChunkBody> {
        if len <= READ_WHOLE {
            let mut data = Vec::with_capacity(len as usize);
            std::io::Read::read_to_end(
                &mut std::io::Read::take(std::fs::File::open(path)?, len + 1),
                &mut data,
            )?;
            if data.len() as u64 != len {
                return Err(std::io::Error::other(if (data.len() as u64) < len {
                    "the file shrank since it was sampled"
                } else {
                    "the file grew since it was sampled"
                }));
            }
            return Ok(ChunkBody::new(
                head,
                [Bytes::from(data), Bytes::new()],
                tail,
            ));
        }
        let file = tokio::fs::File::from_std(std::fs::File::open(path)?);
        let remaining = head.len() as u64 + len + tail.len() as u64;
        Ok(ChunkBody {
            chunks: [Some(head), None, None, Some(tail)],
            file: Some(FilePart { file, left: len }),
            next: 0,
            remaining,
        })
    }

    /// The next piece of the streamed file, or `None` when it is done.
    fn poll_file(&mut self, cx: &mut Context<'_>) -> Poll<Option<std::io::Result<Bytes>>> {
        let Some(f) = self.file.as_mut() else {
            return Poll::Ready(None);
        };
        let want = f.left.min(FILE_CHUNK as u64) as usize;
        let mut buf = BytesMut::zeroed(want.max(1));
        let mut rb = ReadBuf::new(&mut buf);
        match Pin::new(&mut f.file).poll_read(cx, &mut rb) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Err(e)) => Poll::Ready(Some(Err(e))),
            Poll::Ready(Ok(())) => {
                let n = rb.filled().len();
                if want == 0 {
                    self.file = None;
                    return Poll::Ready(if n == 0 {
                        None
                    } else {
                        Some(Err(std::io::Error::other(
                            "the file grew since it was sampled",
                        )))
                    });
                }
                if n == 0 {
                    return Poll::Ready(Some(Err(std::io::Error::other(
                        "the file shrank since it was sampled",
                    ))));
                }
                f.left -= n as u64;
                buf.truncate(n);
                Poll::Ready(Some(Ok(buf.freeze())))
            }
        }
    }
    /// The body's pieces when it is all in memory (nothing streamed from a file and nothing
    /// taken yet), for the fast path's vectored write; it stays whole, to be sent again.
    pub fn in_memory(&self) -> Option<[&[u8]; 4]> {
        if self.file.is_some() || self.next != 0 {
            return None;
        }
        Some(std::array::from_fn(|i| {
            self.chunks[i].as_deref().unwrap_or_default()
        }))
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
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        while self.next < self.chunks.len() {
            let i = self.next;
            if i == 1 && self.file.is_some() {
                match self.poll_file(cx) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(Some(Ok(b))) => {
                        self.remaining -= b.len() as u64;
                        return Poll::Ready(Some(Ok(Frame::data(b))));
                    }
                    Poll::Ready(Some(Err(e))) => return Poll::Ready(Some(Err(e))),
                    Poll::Ready(None) => {}
                }
            }
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
            [Bytes::new(), Bytes::from_static(b"xy")],
            Bytes::from_static(b"cde"),
        );
        assert_eq!(http_body::Body::size_hint(&b).exact(), Some(7));
        let all = b.collect().await.unwrap().to_bytes();
        assert_eq!(&all[..], b"abxycde");
    }

    #[tokio::test]
    async fn a_file_is_streamed_between_head_and_tail() {
        let dir = std::env::temp_dir().join(format!("ib-body-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("f");
        let content: Vec<u8> = (0..400_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&p, &content).unwrap();
        let b = ChunkBody::file(
            Bytes::from_static(b"H"),
            &p,
            content.len() as u64,
            Bytes::from_static(b"T"),
        )
        .unwrap();
        assert_eq!(http_body::Body::size_hint(&b).exact(), Some(400_002));
        let all = b.collect().await.unwrap().to_bytes();
        assert_eq!(all.len(), 400_002);
        assert_eq!(&all[1..400_001], &content[..]);
        let short = ChunkBody::file(Bytes::new(), &p, 500_000, Bytes::new()).unwrap();
        assert!(
            short.collect().await.is_err(),
            "a file shorter than announced fails"
        );
        // A small file is read whole, ready in one piece; a size that no longer holds fails.
        let q = dir.join("small");
        std::fs::write(&q, &content[..1000]).unwrap();
        let b =
            ChunkBody::file(Bytes::from_static(b"H"), &q, 1000, Bytes::from_static(b"T")).unwrap();
        assert_eq!(http_body::Body::size_hint(&b).exact(), Some(1002));
        let all = b.collect().await.unwrap().to_bytes();
        assert_eq!(&all[1..1001], &content[..1000]);
        for announced in [999, 1001] {
            assert!(ChunkBody::file(Bytes::new(), &q, announced, Bytes::new()).is_err());
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
