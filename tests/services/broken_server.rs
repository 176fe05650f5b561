//! A raw TCP server in the test process that breaks every exchange the
//! way it is told to, so "truncated" is really a body cut short and "hang"
//! a server that never answers; the fault tests put it where a model
//! endpoint, Prometheus or a database should be.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc;
use std::time::Duration;

/// The config under which a hanging server costs a test one second: the
/// model's and Prometheus' timeouts.
pub const QUICK_TIMEOUTS: &str = "[model]\ntimeout_secs = 1\n\n[metrics]\ntimeout_secs = 1\n";

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fault {
    /// Nothing listens on the port.
    Refused,
    /// The server accepts and never answers.
    Hang,
    ServerError,
    /// 200 with a body that is not the API's.
    Garbage,
    /// A body cut short: Content-Length promises more than is sent.
    Truncated,
    Unauthorized,
    Quota,
}

/// A server that breaks every exchange with `fault`; its URL.
pub fn broken_server(fault: Fault) -> String {
    broken_server_reporting(fault).0
}

/// [`broken_server`], with a receiver that gets one message per request
/// read in full (before the fault is served), so a test can wait until a
/// client is really waiting on it.
pub fn broken_server_reporting(fault: Fault) -> (String, mpsc::Receiver<()>) {
    let (read_tx, read_rx) = mpsc::channel();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    if fault == Fault::Refused {
        // Bound, then closed: the port refuses.
        drop(listener);
        return (format!("http://{addr}"), read_rx);
    }
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { continue };
            let read = read_tx.clone();
            std::thread::spawn(move || answer(conn, fault, read));
        }
    });
    (format!("http://{addr}"), read_rx)
}

fn answer(mut conn: TcpStream, fault: Fault, read: mpsc::Sender<()>) {
    // Read the request head and body (the client waits for us anyway).
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        let Ok(n) = conn.read(&mut chunk) else { return };
        if n == 0 {
            return;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    while buf.len() < head_end + length {
        let Ok(n) = conn.read(&mut chunk) else { return };
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    // The test may have stopped listening; that is no reason to fail.
    let _ = read.send(());
    let reply = |status: &str, kind: &str, body: &str, claimed: usize| {
        format!(
            "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {claimed}\r\nConnection: close\r\n\r\n{body}"
        )
    };
    let text = match fault {
        Fault::Refused => return,
        Fault::Hang => {
            std::thread::sleep(Duration::from_secs(120));
            return;
        }
        Fault::ServerError => {
            let b = "upstream overloaded";
            reply("503 Service Unavailable", "text/plain", b, b.len())
        }
        Fault::Garbage => {
            let b = "<html><body>please log in</body></html>";
            reply("200 OK", "text/html", b, b.len())
        }
        Fault::Truncated => {
            let b = r#"{"status":"success","data":{"alerts":[{"labels":{"alertn"#;
            reply("200 OK", "application/json", b, b.len() + 400)
        }
        Fault::Unauthorized => {
            let b =
                r#"{"error":{"message":"Incorrect API key provided","code":"invalid_api_key"}}"#;
            reply("401 Unauthorized", "application/json", b, b.len())
        }
        Fault::Quota => {
            let b = r#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota"}}"#;
            reply("429 Too Many Requests", "application/json", b, b.len())
        }
    };
    let _ = conn.write_all(text.as_bytes());
    let _ = conn.flush();
}
