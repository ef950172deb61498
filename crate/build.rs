//! The WGSL kernels as the library embeds them: `shaders/<name>.wgsl` with its comments
//! and indentation taken out (into `$OUT_DIR/shaders/`), so the wasm engine carries only
//! the code. Every line stays where it was, so a compiler message's line number still
//! points into the file in `shaders/`. Native and wasm builds embed the same text.

use std::fs;
use std::path::Path;

fn main() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shaders");
    let out = Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("shaders");
    fs::create_dir_all(&out).expect("create $OUT_DIR/shaders");
    println!("cargo:rerun-if-changed={}", src.display());
    for entry in fs::read_dir(&src).expect("read shaders/") {
        let path = entry.expect("list shaders/").path();
        if path.extension().and_then(|e| e.to_str()) != Some("wgsl") {
            continue;
        }
        println!("cargo:rerun-if-changed={}", path.display());
        let text = fs::read_to_string(&path).expect("read a shader");
        let name = path.file_name().expect("a shader file name");
        fs::write(out.join(name), strip(&text)).expect("write a stripped shader");
    }
}

/// WGSL without its `//` comments (WGSL has no string literals, so `//` always starts
/// one) and without leading and trailing blanks; line breaks kept.
fn strip(wgsl: &str) -> String {
    let mut s = String::with_capacity(wgsl.len() / 2);
    for line in wgsl.lines() {
        let code = line.split("//").next().unwrap_or("");
        s.push_str(code.trim());
        s.push('\n');
    }
    s
}
