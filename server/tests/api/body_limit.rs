//! Request bodies over the JSON limit (2 MiB) over a raw connection, as any client sends them:
//! the whole body is taken in and answered 413 (a client that is still sending gets the answer,
//! not a broken pipe), and the answer says the connection ends, so no client reuses it.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::harness::Server;

/// Sends `POST /api/v1/quotes` with a JSON body of about `mib` MiB on a new connection, and reads
/// the answer's head. `Err` says what failed: writing the body, or reading the answer.
async fn post_large(server: &Server, key: &str, mib: usize) -> Result<String, String> {
    let body = format!(
        r#"{{"customerId": "x", "title": "{}", "lines": []}}"#,
        "x".repeat(mib * 1024 * 1024)
    );
    let head = format!(
        "POST /api/v1/quotes HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {key}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    let mut stream = TcpStream::connect(("127.0.0.1", server.port))
        .await
        .unwrap();
    stream
        .write_all(format!("{head}{body}").as_bytes())
        .await
        .map_err(|e| format!("writing the {mib} MiB body failed: {e}"))?;
    let mut answer = Vec::new();
    let mut buffer = [0_u8; 4096];
    while !answer.windows(4).any(|w| w == b"\r\n\r\n") {
        let read = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buffer))
            .await
            .map_err(|_| "no answer within 10 s".to_owned())?
            .map_err(|e| format!("reading the answer failed: {e}"))?;
        if read == 0 {
            return Err(format!(
                "the connection closed after {}",
                String::from_utf8_lossy(&answer)
            ));
        }
        answer.extend_from_slice(&buffer[..read]);
    }
    Ok(String::from_utf8_lossy(&answer).to_ascii_lowercase())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_over_the_limit_is_read_to_its_end_and_answered_413_with_connection_close() {
    let server = Server::start().await;
    let key = server.full_key().await;
    // 3 MiB fits in the sockets' buffers; 12 MiB does not, so the client is still writing when
    // the server has its first 2 MiB. Before the server read on to the end, that client got a
    // broken pipe instead of the 413.
    for mib in [3, 12] {
        let head = post_large(&server, &key, mib).await.unwrap();
        assert!(head.starts_with("http/1.1 413"), "{head}");
        assert!(head.contains("\r\nconnection: close\r\n"), "{head}");
    }
}
