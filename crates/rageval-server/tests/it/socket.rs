//! One test over a real socket on loopback: the server binds, answers HTTP/1.1, and keeps
//! its token check on the wire.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};

use rageval_server::{AppState, RunsRoot, Server, Token};

use crate::fixture;

fn request(addr: SocketAddr, path: &str, extra: &str) -> String {
    let mut stream = TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\n{extra}Connection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    answer
}

#[test]
fn serves_over_a_loopback_socket() {
    let dir = fixture();
    let runs = RunsRoot::open(&dir.path().join("runs")).unwrap();
    let state = AppState::new(runs, Some(Token::new("wire").unwrap()));
    let server = Server::bind("127.0.0.1:0".parse().unwrap(), state).unwrap();
    let addr = server.local_addr().unwrap();
    assert!(addr.ip().is_loopback() && addr.port() != 0);
    // The thread ends with the test process.
    std::thread::spawn(move || server.run());

    let refused = request(addr, "/api/runs", "");
    assert!(refused.starts_with("HTTP/1.1 401"), "{refused}");
    let answer = request(addr, "/api/runs/base", "Authorization: Bearer wire\r\n");
    assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
    assert!(answer.contains("content-type: application/json"));
    assert!(answer.contains("\"n_scored\":40"));
}

/// Regression: `rageval serve --bind localhost:PORT` was refused (only numeric addresses
/// parsed). A name that resolves to loopback binds without a token; one that may reach
/// beyond loopback still needs one.
#[test]
fn a_host_name_that_resolves_to_loopback_binds() {
    let dir = fixture();
    let state = || AppState::new(RunsRoot::open(&dir.path().join("runs")).unwrap(), None);
    let server = Server::bind_spec("localhost:0", state()).unwrap();
    let addr = server.local_addr().unwrap();
    assert!(addr.ip().is_loopback() && addr.port() != 0, "{addr}");
    std::thread::spawn(move || server.run());
    let answer = request(addr, "/api/runs/base", "");
    assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");

    let exposed = Server::bind_spec("0.0.0.0:0", state()).unwrap_err();
    assert!(exposed.to_string().contains("without a token"), "{exposed}");
    let no_port = Server::bind_spec("localhost", state()).unwrap_err();
    assert!(
        no_port.to_string().contains("hint: give HOST:PORT"),
        "{no_port}"
    );
}
