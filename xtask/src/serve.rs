//! `cargo xtask serve [--port N] [--no-build]`: build everything, then serve the
//! playground from `www/dist` on 127.0.0.1 (WebGPU needs a secure context, and
//! localhost is one). A small static file server on the standard library.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Component, Path, PathBuf};

use crate::util::Result;

pub fn run(args: &[String]) -> Result<()> {
    let mut port: Option<u16> = None;
    let mut build = true;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--port" => {
                let v = it.next().ok_or("--port needs a number")?;
                port = Some(
                    v.parse()
                        .map_err(|_| format!("--port: `{v}` is not a port number"))?,
                );
            }
            "--no-build" => build = false,
            other => {
                return Err(format!(
                    "unknown argument `{other}` (serve takes --port N and --no-build)"
                ))
            }
        }
    }
    if build {
        crate::build::build_all()?;
    }
    let dir = crate::build::dist();
    if !dir.join("index.html").exists() {
        return Err(format!(
            "{} has no index.html: run without --no-build",
            dir.display()
        ));
    }
    let listener = bind(port)?;
    let addr = listener
        .local_addr()
        .map_err(|e| format!("cannot read the bound address: {e}"))?;
    println!("Transformer Playground: http://{addr}/");
    serve(listener, &dir)
}

/// Bind 127.0.0.1: the given port, or the first free one from 8000.
fn bind(port: Option<u16>) -> Result<TcpListener> {
    match port {
        Some(p) => TcpListener::bind(("127.0.0.1", p))
            .map_err(|e| format!("cannot listen on 127.0.0.1:{p}: {e}")),
        None => (8000..8100)
            .find_map(|p| TcpListener::bind(("127.0.0.1", p)).ok())
            .ok_or_else(|| "no free port between 8000 and 8099 on 127.0.0.1".into()),
    }
}

/// Serve files under `dir` forever, one thread per connection.
pub fn serve(listener: TcpListener, dir: &Path) -> Result<()> {
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        let dir = dir.to_path_buf();
        std::thread::spawn(move || {
            if let Err(e) = answer(stream, &dir) {
                eprintln!("serve: {e}");
            }
        });
    }
    Ok(())
}

/// The Content-Security-Policy every response carries: scripts, styles, workers and
/// fetches only from this origin, images also as data:/blob: URLs, and
/// `'wasm-unsafe-eval'` because compiling the engine's WebAssembly counts as eval. No
/// inline script or style is allowed anywhere (the page's CSS is a file; Lit's component
/// styles are constructed style sheets, which style-src does not govern). The browser tests
/// serve the page under the same policy, read from the same file.
pub const CONTENT_SECURITY_POLICY: &str = include_str!("../../www/content-security-policy.txt");

/// The policy as one header value (the file may wrap it over lines).
pub fn csp_header() -> String {
    CONTENT_SECURITY_POLICY
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect::<Vec<_>>()
        .join(" ")
}

fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" => "application/json",
        "wasm" => "application/wasm",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "txt" | "md" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

/// The file a request path names, or None when it leaves `dir` or does not exist.
fn resolve(dir: &Path, target: &str) -> Option<PathBuf> {
    let path = target.split(['?', '#']).next().unwrap_or("/");
    let mut out = dir.to_path_buf();
    for part in Path::new(&percent_decode(path)?).components() {
        match part {
            Component::Normal(p) => out.push(p),
            Component::RootDir | Component::CurDir => {}
            // `..` and drive prefixes never leave the served folder.
            _ => return None,
        }
    }
    if out.is_dir() {
        out.push("index.html");
    }
    out.is_file().then_some(out)
}

fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

fn answer(stream: TcpStream, dir: &Path) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    // Drain the headers; the server needs none of them.
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line == "\r\n" || line == "\n" {
            break;
        }
    }
    let mut parts = request_line.split_whitespace();
    let method = parts.next().unwrap_or("");
    let target = parts.next().unwrap_or("/");
    let mut out = stream;
    if method != "GET" && method != "HEAD" {
        return respond(
            &mut out,
            "405 Method Not Allowed",
            "text/plain",
            b"GET only\n",
            true,
        );
    }
    match resolve(dir, target) {
        Some(path) => {
            let body = std::fs::read(&path)?;
            respond(
                &mut out,
                "200 OK",
                content_type(&path),
                &body,
                method == "GET",
            )
        }
        None => respond(
            &mut out,
            "404 Not Found",
            "text/plain",
            b"not found\n",
            method == "GET",
        ),
    }
}

fn respond(
    out: &mut TcpStream,
    status: &str,
    kind: &str,
    body: &[u8],
    with_body: bool,
) -> std::io::Result<()> {
    write!(
        out,
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nContent-Security-Policy: {}\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n",
        body.len(),
        csp_header()
    )?;
    if with_body {
        out.write_all(body)?;
    }
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_never_leave_the_served_folder() {
        let dir = std::env::temp_dir().join(format!("tplay-serve-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("models")).unwrap();
        std::fs::write(dir.join("index.html"), "x").unwrap();
        std::fs::write(dir.join("models/a.json"), "{}").unwrap();
        assert_eq!(resolve(&dir, "/"), Some(dir.join("index.html")));
        assert_eq!(
            resolve(&dir, "/models/a.json?x=1"),
            Some(dir.join("models/a.json"))
        );
        assert_eq!(resolve(&dir, "/../etc/passwd"), None);
        assert_eq!(resolve(&dir, "/models/%2e%2e/%2e%2e/etc/passwd"), None);
        assert_eq!(resolve(&dir, "/missing.js"), None);
        assert_eq!(resolve(&dir, "/%zz"), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_policy_is_the_strict_one_on_one_line() {
        assert_eq!(
            csp_header(),
            "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; \
             img-src 'self' data: blob:; worker-src 'self'"
        );
    }

    #[test]
    fn wasm_is_served_as_application_wasm() {
        assert_eq!(
            content_type(Path::new("a/tplay_bg.wasm")),
            "application/wasm"
        );
        assert_eq!(
            content_type(Path::new("playground.js")),
            "text/javascript; charset=utf-8"
        );
    }
}
