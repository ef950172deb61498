//! `cargo xtask serve [--port N] [--no-build] [--lan]`: build everything, then serve the
//! playground from `www/dist` on 127.0.0.1 (WebGPU needs a secure context, and
//! localhost is one). With `--lan`, on every interface (0.0.0.0), printing this
//! computer's network addresses to give students: a lab without internet, from one
//! machine (www/README.md, "Running a class on a LAN"). A small static file server on the
//! standard library.

use std::io::{BufRead, BufReader, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::path::{Component, Path, PathBuf};

use crate::util::Result;

pub fn run(args: &[String]) -> Result<()> {
    let mut port: Option<u16> = None;
    let mut build = true;
    let mut lan = false;
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
            "--lan" => lan = true,
            other => {
                return Err(format!(
                    "unknown argument `{other}` (serve takes --port N, --no-build and --lan)"
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
    let host = if lan {
        Ipv4Addr::UNSPECIFIED
    } else {
        Ipv4Addr::LOCALHOST
    };
    let listener = bind(host, port)?;
    let addr = listener
        .local_addr()
        .map_err(|e| format!("cannot read the bound address: {e}"))?;
    if lan {
        print!("{}", lan_banner(addr.port(), &lan_addresses()));
    } else {
        println!("Transformer Playground: http://{addr}/");
    }
    serve(listener, &dir)
}

/// Bind `host`: the given port, or the first free one from 8000.
fn bind(host: Ipv4Addr, port: Option<u16>) -> Result<TcpListener> {
    match port {
        Some(p) => {
            TcpListener::bind((host, p)).map_err(|e| format!("cannot listen on {host}:{p}: {e}"))
        }
        None => (8000..8100)
            .find_map(|p| TcpListener::bind((host, p)).ok())
            .ok_or_else(|| format!("no free port between 8000 and 8099 on {host}")),
    }
}

/// This computer's IPv4 addresses on its networks (not loopback), found by asking the
/// system which local address it would send from towards the default route and towards
/// each private range. A UDP `connect` sends nothing, so this works with no internet.
pub fn lan_addresses() -> Vec<Ipv4Addr> {
    let towards = [
        Ipv4Addr::new(8, 8, 8, 8),
        Ipv4Addr::new(10, 255, 255, 254),
        Ipv4Addr::new(172, 31, 255, 254),
        Ipv4Addr::new(192, 168, 255, 254),
        Ipv4Addr::new(169, 254, 255, 254),
    ];
    let mut out: Vec<Ipv4Addr> = Vec::new();
    for t in towards {
        let Ok(sock) = UdpSocket::bind((Ipv4Addr::UNSPECIFIED, 0)) else {
            continue;
        };
        if sock.connect(SocketAddr::from((t, 9))).is_err() {
            continue;
        }
        if let Ok(SocketAddr::V4(a)) = sock.local_addr() {
            let ip = *a.ip();
            if !ip.is_loopback() && !ip.is_unspecified() && !out.contains(&ip) {
                out.push(ip);
            }
        }
    }
    out
}

/// What `serve --lan` prints: where the page is, the addresses to give students, and
/// what plain HTTP on a network address leaves out.
pub fn lan_banner(port: u16, addrs: &[Ipv4Addr]) -> String {
    let mut s = format!(
        "Transformer Playground, serving on every network of this computer (port {port}).\n\
         On this computer: http://127.0.0.1:{port}/ (WebGPU and the offline copy work here)\n"
    );
    if addrs.is_empty() {
        s.push_str(
            "No network address found: connect this computer to the class network (or start its hotspot) and run this again.\n",
        );
    } else {
        s.push_str("Give students (same network):\n");
        for a in addrs {
            s.push_str(&format!("  {}\n", url_of(IpAddr::V4(*a), port)));
        }
        s.push_str(
            "Over plain HTTP on a network address the page runs on the CPU engine (WebGPU needs a \
             secure context) and keeps no offline copy (no service worker); everything else works. \
             See www/README.md, \"Running a class on a LAN\".\n",
        );
    }
    s
}

fn url_of(ip: IpAddr, port: u16) -> String {
    match ip {
        IpAddr::V4(a) => format!("http://{a}:{port}/"),
        IpAddr::V6(a) => format!("http://[{a}]:{port}/"),
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
    // Drain the headers; the server needs only If-None-Match (a reload in a class of 30
    // then costs each device a few hundred bytes, not the engine again).
    let mut if_none_match = String::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line == "\r\n" || line == "\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            if name.trim().eq_ignore_ascii_case("if-none-match") {
                if_none_match = value.trim().to_string();
            }
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
            let tag = etag(&path)?;
            if !if_none_match.is_empty() && if_none_match.split(',').any(|t| t.trim() == tag) {
                return respond_with(
                    &mut out,
                    "304 Not Modified",
                    content_type(&path),
                    b"",
                    false,
                    &tag,
                );
            }
            let body = std::fs::read(&path)?;
            respond_with(
                &mut out,
                "200 OK",
                content_type(&path),
                &body,
                method == "GET",
                &tag,
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

/// A file's validator: its length and modification time (a rebuilt file gets a new one).
fn etag(path: &Path) -> std::io::Result<String> {
    let m = std::fs::metadata(path)?;
    let t = m
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    Ok(format!("\"{:x}-{:x}\"", m.len(), t))
}

fn respond(
    out: &mut TcpStream,
    status: &str,
    kind: &str,
    body: &[u8],
    with_body: bool,
) -> std::io::Result<()> {
    respond_with(out, status, kind, body, with_body, "")
}

fn respond_with(
    out: &mut TcpStream,
    status: &str,
    kind: &str,
    body: &[u8],
    with_body: bool,
    etag: &str,
) -> std::io::Result<()> {
    let etag = if etag.is_empty() {
        String::new()
    } else {
        format!("ETag: {etag}\r\n")
    };
    write!(
        out,
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nContent-Security-Policy: {}\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\n{etag}Connection: close\r\n\r\n",
        if status.starts_with("304") { 0 } else { body.len() },
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
    fn the_lan_banner_names_every_address_and_what_plain_http_leaves_out() {
        let s = lan_banner(
            8001,
            &[Ipv4Addr::new(192, 168, 1, 23), Ipv4Addr::new(10, 0, 0, 5)],
        );
        assert!(s.contains("http://127.0.0.1:8001/"), "{s}");
        assert!(s.contains("  http://192.168.1.23:8001/\n"), "{s}");
        assert!(s.contains("  http://10.0.0.5:8001/\n"), "{s}");
        assert!(s.contains("CPU") && s.contains("service worker"), "{s}");
        let none = lan_banner(8001, &[]);
        assert!(none.contains("No network address found"), "{none}");
    }

    #[test]
    fn lan_addresses_are_never_loopback_and_listening_on_all_interfaces_reaches_them() {
        let addrs = lan_addresses();
        assert!(addrs
            .iter()
            .all(|a| !a.is_loopback() && !a.is_unspecified()));
        let l = bind(Ipv4Addr::UNSPECIFIED, None).unwrap();
        let port = l.local_addr().unwrap().port();
        // Every printed address (and localhost) reaches the server bound on 0.0.0.0.
        for a in addrs.iter().copied().chain([Ipv4Addr::LOCALHOST]) {
            TcpStream::connect((a, port)).unwrap_or_else(|e| panic!("{a}:{port}: {e}"));
            l.accept().unwrap();
        }
    }

    #[test]
    fn a_file_seen_before_is_answered_not_modified() {
        use std::io::Read;
        let dir = std::env::temp_dir().join(format!("tplay-etag-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("index.html"), "hello").unwrap();
        let l = bind(Ipv4Addr::LOCALHOST, None).unwrap();
        let port = l.local_addr().unwrap().port();
        let d = dir.clone();
        std::thread::spawn(move || serve(l, &d));
        let get = |extra: &str| {
            let mut c = TcpStream::connect((Ipv4Addr::LOCALHOST, port)).unwrap();
            write!(c, "GET / HTTP/1.1\r\nHost: x\r\n{extra}\r\n").unwrap();
            let mut s = String::new();
            c.read_to_string(&mut s).unwrap();
            s
        };
        let first = get("");
        assert!(
            first.starts_with("HTTP/1.1 200") && first.ends_with("hello"),
            "{first}"
        );
        let tag = first
            .lines()
            .find_map(|l| l.strip_prefix("ETag: "))
            .unwrap()
            .to_string();
        let again = get(&format!("If-None-Match: {tag}\r\n"));
        assert!(again.starts_with("HTTP/1.1 304"), "{again}");
        assert!(!again.ends_with("hello"), "{again}");
        let other = get("If-None-Match: \"0-0\"\r\n");
        assert!(other.starts_with("HTTP/1.1 200"), "{other}");
        std::fs::remove_dir_all(&dir).unwrap();
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
