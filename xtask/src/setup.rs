//! What `cargo xtask test` needs from the system, checked before anything compiles: Debian's
//! `chromium` (the browser tests), `firefox-esr`, `webkit2gtk-driver`, `xvfb` and `xauth`
//! (the same page in Gecko and in WebKit, whose driver needs a display), `mesa-vulkan-drivers`
//! (lavapipe, the Vulkan adapter of the GPU tests on a machine without a GPU) and
//! `libvulkan1` (the loader wgpu opens). Run as root on a machine with apt (as `.ci/run`
//! does), the missing ones are installed; otherwise the run stops at once with the one
//! command that installs them.

use std::path::Path;
use std::process::Command;

use crate::util::{sh, Result};

/// One system package and how to tell it is there.
struct Need {
    package: &'static str,
    present: fn() -> bool,
}

fn chromium_present() -> bool {
    crate::build::chromium().is_ok_and(|p| p.exists())
}

fn firefox_present() -> bool {
    Path::new(&std::env::var("TPLAY_FIREFOX").unwrap_or_else(|_| "/usr/bin/firefox-esr".into()))
        .exists()
}

fn webkit_driver_present() -> bool {
    Path::new(
        &std::env::var("TPLAY_WEBKIT_DRIVER").unwrap_or_else(|_| "/usr/bin/WebKitWebDriver".into()),
    )
    .exists()
}

fn xvfb_present() -> bool {
    Path::new("/usr/bin/xvfb-run").exists()
}

/// xvfb-run's X authority tool (only a Recommends of `xvfb`).
fn xauth_present() -> bool {
    Path::new("/usr/bin/xauth").exists()
}

/// The packages only the GPU tests need (`--no-gpu` runs without them).
const GPU_PACKAGES: [&str; 2] = ["mesa-vulkan-drivers", "libvulkan1"];

/// Any Vulkan driver manifest (lavapipe's, or a real GPU's).
fn vulkan_driver_present() -> bool {
    ["/usr/share/vulkan/icd.d", "/etc/vulkan/icd.d"]
        .iter()
        .any(|d| {
            std::fs::read_dir(d)
                .map(|mut it| {
                    it.any(|e| {
                        e.map(|e| e.path().extension().is_some_and(|x| x == "json"))
                            .unwrap_or(false)
                    })
                })
                .unwrap_or(false)
        })
}

fn vulkan_loader_present() -> bool {
    let libdirs = [
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib/aarch64-linux-gnu",
        "/usr/lib64",
        "/usr/lib",
        "/lib/x86_64-linux-gnu",
    ];
    if libdirs
        .iter()
        .any(|d| Path::new(d).join("libvulkan.so.1").exists())
    {
        return true;
    }
    Command::new("ldconfig")
        .arg("-p")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).contains("libvulkan.so.1"))
        .unwrap_or(false)
}

/// The packages this run needs that are missing (`gpu`: the Vulkan ones too).
fn missing(gpu: bool) -> Vec<&'static str> {
    let mut needs = vec![
        Need {
            package: "chromium",
            present: chromium_present,
        },
        Need {
            package: "firefox-esr",
            present: firefox_present,
        },
        Need {
            package: "webkit2gtk-driver",
            present: webkit_driver_present,
        },
        Need {
            package: "xvfb",
            present: xvfb_present,
        },
        Need {
            package: "xauth",
            present: xauth_present,
        },
    ];
    if gpu {
        needs.push(Need {
            package: "mesa-vulkan-drivers",
            present: vulkan_driver_present,
        });
        needs.push(Need {
            package: "libvulkan1",
            present: vulkan_loader_present,
        });
    }
    needs
        .into_iter()
        .filter(|n| !(n.present)())
        .map(|n| n.package)
        .collect()
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

fn has_apt() -> bool {
    Path::new("/usr/bin/apt-get").exists()
}

/// The one line that installs `packages` (what a user without root runs).
fn install_line(packages: &[&str]) -> String {
    format!("sudo apt-get install -y {}", packages.join(" "))
}

/// Check (and as root with apt, install) what the tests need; `gpu`: the Vulkan packages
/// too (not with `--no-gpu`).
pub fn ensure(gpu: bool) -> Result<()> {
    let want = missing(gpu);
    if want.is_empty() {
        return Ok(());
    }
    if !(is_root() && has_apt()) {
        let how = if has_apt() {
            install_line(&want)
        } else {
            format!(
                "install {} with your system's package manager",
                want.join(", ")
            )
        };
        return Err(format!(
            "the tests need {} (missing); run: {how}{}",
            want.join(", "),
            if gpu && want.iter().any(|p| GPU_PACKAGES.contains(p)) {
                " — or `cargo xtask test --no-gpu` on a machine without Vulkan"
            } else {
                ""
            }
        ));
    }
    eprintln!("installing what the tests need: {}", want.join(", "));
    sh(Command::new("apt-get").args(["update", "-q"]))?;
    let mut install = Command::new("apt-get");
    install
        .args(["install", "-y", "-q"])
        .args(&want)
        .env("DEBIAN_FRONTEND", "noninteractive");
    sh(&mut install)?;
    let still = missing(gpu);
    if still.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "apt-get installed {} but {} still missing",
            want.join(", "),
            still.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::install_line;

    #[test]
    fn the_install_line_is_one_command() {
        assert_eq!(
            install_line(&["chromium", "libvulkan1"]),
            "sudo apt-get install -y chromium libvulkan1"
        );
    }
}
