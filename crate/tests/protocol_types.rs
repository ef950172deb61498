//! The page's TypeScript types of the worker protocol (www/src/engine/generated.ts) are
//! exactly what ts-rs generates from the Rust types today: this test regenerates them and
//! fails when the committed file is stale. `TPLAY_UPDATE_TYPES=1` rewrites the file.

use std::path::Path;

#[test]
fn generated_typescript_protocol_types_are_up_to_date() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../www/src/engine/generated.ts");
    let fresh = tplay::protocol::typescript();
    if std::env::var("TPLAY_UPDATE_TYPES").as_deref() == Ok("1") {
        std::fs::write(&path, &fresh).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed != fresh {
        let line = committed
            .lines()
            .zip(fresh.lines())
            .position(|(a, b)| a != b)
            .map_or(
                committed.lines().count().min(fresh.lines().count()) + 1,
                |i| i + 1,
            );
        panic!(
            "{} is stale (first difference at line {line}): run \
             TPLAY_UPDATE_TYPES=1 cargo test -p tplay --test protocol_types",
            path.display()
        );
    }
}
