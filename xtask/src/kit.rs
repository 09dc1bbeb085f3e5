//! `cargo xtask kit`: the kit against the binary a test VM loads. The kit and the simulated
//! ndis.sys are built for x86_64-pc-windows-gnu as one executable, `hlk.exe`, and run under Wine
//! against each x64 image of `cargo xtask pe` (or the one `--image` names), so every call between
//! the simulator and the driver is the Microsoft x64 convention and the code under test is the
//! code rust-lld linked.
//!
//! The image imports ndis.sys, ntoskrnl.exe and hal.dll. Beside it, in a staging folder, stand
//! replacement modules of those names that implement nothing: each export is a jump through a
//! slot that the module's DllMain fills with `hlk.exe`'s export of the same name (the simulator's
//! `#[unsafe(no_mangle)]` functions). So there is one simulator, whichever module a call goes
//! to; a jump leaves the arguments, the return address and the stack as the caller made them.
//! They are written in C and built with mingw's gcc, because a jump through a slot is not
//! expressible in stable Rust without an assembler file, and gcc is needed here anyway (Rust's
//! windows-gnu target links with it).
//!
//! Wine 8.0 lacks `bcryptprimitives.dll`, from which Rust's std on Windows imports `ProcessPrng`:
//! a one-function DLL of that name beside `hlk.exe` forwards it to `BCryptGenRandom`
//! (shared facts: Wine host trial).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::{env, fs};

use object::Object as _;
use object::read::pe::PeFile64;

use crate::cross;
use crate::target::{Arch, Profile};

/// The target the kit is built for under Wine.
const KIT_TARGET: &str = "x86_64-pc-windows-gnu";

/// The C compiler of that target (and the linker Rust uses for it).
const MINGW_GCC: &str = "x86_64-w64-mingw32-gcc";

/// The modules an image may import, as the kernel names them.
const MODULES: [&str; 3] = ["ndis.sys", "ntoskrnl.exe", "hal.dll"];

/// The C runtime routines ntoskrnl.exe exports and the compiler calls (block copies, fills and
/// comparisons): the replacement ntoskrnl.exe forwards them to the C runtime the kit itself uses
/// (msvcrt.dll), as the real one exports its own kernel CRT's. The kit's static check of the
/// image's imports leaves them out (`sim::host::image`).
const C_RUNTIME: [&str; 4] = ["memcpy", "memmove", "memset", "memcmp"];

/// What the command line asked for.
struct Options {
    /// An image given with `--image`, run alone instead of the two xtask builds.
    image: Option<PathBuf>,
    /// The cargo profile of the `--image` (release unless `--profile dev`).
    profile: String,
    /// Arguments after `--`, for the kit.
    kit_args: Vec<OsString>,
}

/// `cargo xtask kit [--image PATH [--profile release|dev]] [-- KIT ARGS]`.
pub fn main(root: &Path, args: &[String]) -> ExitCode {
    let options = match parse(args) {
        Ok(o) => o,
        Err(message) => {
            eprintln!("xtask kit: {message}");
            eprintln!(
                "usage: cargo xtask kit [--image PATH] [-- --group NAME --case TEXT --pcap DIR]"
            );
            return ExitCode::from(2);
        }
    };
    let tools = match Tools::find() {
        Ok(t) => t,
        Err(missing) => {
            eprintln!("xtask kit: missing {missing}");
            return ExitCode::from(2);
        }
    };
    match run(root, &tools, &options) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(error) => {
            eprintln!("xtask kit: {error}");
            ExitCode::FAILURE
        }
    }
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut options = Options {
        image: None,
        profile: "release".into(),
        kit_args: Vec::new(),
    };
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--image" => {
                let path = rest.next().ok_or("--image needs a path")?;
                let path = PathBuf::from(path);
                if !path.is_file() {
                    return Err(format!("--image {}: no such file", path.display()));
                }
                options.image = Some(path);
            }
            "--profile" => match rest.next().map(String::as_str) {
                Some(p @ ("release" | "dev")) => options.profile = p.into(),
                Some(other) => return Err(format!("--profile {other:?}: release or dev")),
                None => return Err("--profile needs release or dev".into()),
            },
            "--" => {
                options.kit_args = rest.by_ref().map(OsString::from).collect();
            }
            other => return Err(format!("unknown option {other:?}")),
        }
    }
    Ok(options)
}

/// The host tools the command needs; it installs none of them.
struct Tools {
    /// Wine's 64-bit loader.
    wine: PathBuf,
    /// Wine's server, to start it before the run and wait for it after.
    wineserver: PathBuf,
}

impl Tools {
    /// Finds every tool; what is missing, with the package that brings it, otherwise.
    fn find() -> Result<Self, String> {
        let mut missing = Vec::new();
        let wine = find_program(&[
            "wine64",
            "/usr/lib/wine/wine64",
            "/usr/lib/x86_64-linux-gnu/wine/wine64",
        ]);
        let wineserver = find_program(&[
            "wineserver",
            "/usr/lib/wine/wineserver64",
            "/usr/lib/wine/wineserver",
        ]);
        if wine.is_none() || wineserver.is_none() {
            missing.push("Wine (Debian: apt-get install --no-install-recommends wine64 wine)");
        }
        if find_program(&[MINGW_GCC]).is_none() {
            missing.push("mingw-w64's gcc (Debian: apt-get install gcc-mingw-w64-x86-64)");
        }
        let std_installed = Command::new("rustc")
            .args(["--print", "target-libdir", "--target", KIT_TARGET])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
            .is_some_and(|dir| {
                fs::read_dir(dir).is_ok_and(|mut d| {
                    d.any(|e| {
                        e.is_ok_and(|e| e.file_name().to_string_lossy().starts_with("libstd-"))
                    })
                })
            });
        if !std_installed {
            missing.push(
                "the Rust target x86_64-pc-windows-gnu (rustup target add x86_64-pc-windows-gnu)",
            );
        }
        match (wine, wineserver) {
            (Some(wine), Some(wineserver)) if missing.is_empty() => Ok(Self { wine, wineserver }),
            _ => Err(missing.join("; ")),
        }
    }
}

/// The first of `names` that is a file, or a program on PATH.
fn find_program(names: &[&str]) -> Option<PathBuf> {
    names.iter().find_map(|name| {
        let path = Path::new(name);
        if path.is_absolute() {
            return path.is_file().then(|| path.to_path_buf());
        }
        env::split_paths(&env::var_os("PATH")?)
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
    })
}

/// One image to run the kit against, and where its run is staged and reported.
struct Run {
    /// What the summary calls it.
    label: String,
    image: PathBuf,
    /// target/pe/kit/<label>/
    stage: PathBuf,
    /// The image's cargo profile, for its stack budget: `release` or `dev` (`--profile` for an
    /// image given with `--image`).
    profile: String,
    /// The image with its map file, when it is one of `cargo xtask pe`'s: its static stack
    /// table goes to the kit (an `--image` has no map to name its functions by).
    built: Option<cross::Image>,
}

fn run(root: &Path, tools: &Tools, options: &Options) -> Result<bool, String> {
    let kit_dir = root.join("target").join("pe").join("kit");
    let runs: Vec<Run> = match &options.image {
        Some(image) => vec![Run {
            label: "image".into(),
            image: image.clone(),
            stage: kit_dir.join("image"),
            profile: options.profile.clone(),
            built: None,
        }],
        None => Profile::ALL
            .into_iter()
            .map(|profile| {
                let paths = cross::image_paths(root, Arch::X64, profile);
                if !paths.sys.is_file() {
                    println!("xtask kit: building the x64 {} image", profile.name());
                    cross::build(root, Arch::X64, profile)?;
                }
                Ok(Run {
                    label: profile.name().into(),
                    image: paths.sys.clone(),
                    stage: kit_dir.join(profile.name()),
                    profile: profile.name().into(),
                    built: Some(paths),
                })
            })
            .collect::<Result<_, String>>()?,
    };
    let hlk = build_kit(root)?;
    let prefix = kit_dir.join("wineprefix");
    let mut passed = true;
    for run in &runs {
        stage(root, &hlk, run)?;
        println!(
            "\n== the kit against {} ({})",
            run.image.display(),
            run.label
        );
        passed &= run_kit(tools, &prefix, run, &options.kit_args)?;
    }
    Ok(passed)
}

/// Builds `hlk.exe` with the `kit` profile (optimized, unwinding: the workspace's Cargo.toml).
fn build_kit(root: &Path) -> Result<PathBuf, String> {
    let status = Command::new(env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .current_dir(root)
        .args([
            "build",
            "--profile",
            "kit",
            "--locked",
            "-p",
            "dcbndk-hlk",
            "--bin",
            "hlk",
            "--target",
            KIT_TARGET,
        ])
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err(format!(
            "cargo build of the kit for {KIT_TARGET} failed: {status}"
        ));
    }
    Ok(root
        .join("target")
        .join(KIT_TARGET)
        .join("kit")
        .join("hlk.exe"))
}

/// Writes the staging folder of `run`: the image, `hlk.exe`, the replacement modules generated
/// from the image's imports, and the `bcryptprimitives.dll` shim.
fn stage(root: &Path, hlk: &Path, run: &Run) -> Result<(), String> {
    fs::create_dir_all(&run.stage).map_err(|e| format!("{}: {e}", run.stage.display()))?;
    let data = fs::read(&run.image).map_err(|e| format!("{}: {e}", run.image.display()))?;
    let imports = imports(&data).map_err(|e| format!("{}: {e}", run.image.display()))?;
    copy(&run.image, &run.stage.join("dcbndk.sys"))?;
    copy(hlk, &run.stage.join("hlk.exe"))?;
    let build = run.stage.join("build");
    fs::create_dir_all(&build).map_err(|e| format!("{}: {e}", build.display()))?;
    for module in MODULES {
        let (runtime, names): (Vec<String>, Vec<String>) = imports
            .get(module)
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .partition(|name| C_RUNTIME.contains(&name.as_str()));
        let stem = module.split('.').next().unwrap_or(module);
        let c = build.join(format!("{stem}.c"));
        let def = build.join(format!("{stem}.def"));
        write(&c, &trampolines_c(&names))?;
        write(&def, &def_file(module, &names, &runtime))?;
        gcc(
            &[c.as_os_str(), def.as_os_str()],
            &run.stage.join(module),
            &[],
        )?;
    }
    let prng_c = build.join("bcryptprimitives.c");
    let prng_def = build.join("bcryptprimitives.def");
    write(&prng_c, PROCESS_PRNG_C)?;
    write(
        &prng_def,
        "LIBRARY bcryptprimitives.dll\nEXPORTS\nProcessPrng\n",
    )?;
    gcc(
        &[prng_c.as_os_str(), prng_def.as_os_str()],
        &run.stage.join("bcryptprimitives.dll"),
        &["-lbcrypt"],
    )?;
    let table = run.stage.join(STACK_TABLE);
    match &run.built {
        Some(image) => write(&table, &static_stack_table(root, image)?)?,
        None => match fs::remove_file(&table) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(format!("{}: {e}", table.display()));
            }
            _ => {}
        },
    }
    Ok(())
}

/// The file in the staging folder with the image's static deepest path per entry point
/// (`image::check`, as `cargo xtask pe` prints it), for the kit's Lifecycle stack case, which
/// reports each entry point's measured high-water mark beside it (`DCBNDK_IMAGE_STACK`).
const STACK_TABLE: &str = "stack-static.tsv";

/// One line per entry point: its RVA in hex (0: not in the map), its deepest path in bytes
/// (`unbounded` for a recursion) and its name.
fn static_stack_table(root: &Path, image: &cross::Image) -> Result<String, String> {
    let report = crate::image::check(root, image)?;
    let mut out = String::new();
    for entry in &report.entries {
        let rva = report.symbols.rva(&entry.name).unwrap_or(0);
        let bytes = match &entry.depth {
            crate::callgraph::Depth::Bounded { bytes, .. } => bytes.to_string(),
            crate::callgraph::Depth::Recursive { .. } => "unbounded".to_owned(),
        };
        out.push_str(&format!("{rva:#x}\t{bytes}\t{}\n", entry.name));
    }
    Ok(out)
}

/// The image's imports by module (lower case), each module's names in import order.
fn imports(data: &[u8]) -> Result<BTreeMap<String, Vec<String>>, String> {
    let file = PeFile64::parse(data).map_err(|e| format!("not a PE32+ image: {e}"))?;
    let mut by_module: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for import in file
        .imports()
        .map_err(|e| format!("bad import table: {e}"))?
    {
        let module = String::from_utf8_lossy(import.library()).to_ascii_lowercase();
        if !MODULES.contains(&module.as_str()) {
            return Err(format!(
                "imports from {module}, which the kit does not stand in for"
            ));
        }
        let name = String::from_utf8_lossy(import.name()).into_owned();
        if !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return Err(format!("import {module}!{name} is not a C identifier"));
        }
        by_module.entry(module).or_default().push(name);
    }
    Ok(by_module)
}

/// A replacement module's C source: one slot and one jump per name, the slots filled at load
/// from the executable's exports; a name the executable does not export fails the load.
fn trampolines_c(names: &[String]) -> String {
    let mut c = String::from(
        "/* Generated by cargo xtask kit: jumps to the simulator's exports (xtask/src/kit.rs). */\n\
         #include <windows.h>\n\n",
    );
    let count = names.len().max(1);
    c.push_str(&format!("void *dcbndk_slots[{count}];\n"));
    c.push_str(&format!("static const char *const names[{count}] = {{\n"));
    for name in names {
        c.push_str(&format!("    \"{name}\",\n"));
    }
    if names.is_empty() {
        c.push_str("    0,\n");
    }
    c.push_str("};\n\n");
    c.push_str(&format!(
        "BOOL WINAPI DllMain(HINSTANCE self, DWORD reason, LPVOID reserved) {{\n\
         \x20   (void)self; (void)reserved;\n\
         \x20   if (reason != DLL_PROCESS_ATTACH) return TRUE;\n\
         \x20   HMODULE exe = GetModuleHandleW(NULL);\n\
         \x20   for (int i = 0; i < {}; i++) {{\n\
         \x20       dcbndk_slots[i] = (void *)GetProcAddress(exe, names[i]);\n\
         \x20       if (!dcbndk_slots[i]) return FALSE;\n\
         \x20   }}\n\
         \x20   return TRUE;\n\
         }}\n\n",
        names.len()
    ));
    c.push_str("__asm__(\".text\\n\"\n");
    for (i, name) in names.iter().enumerate() {
        c.push_str(&format!(
            "    \".globl {name}\\n{name}:\\n    jmp *dcbndk_slots+{}(%rip)\\n\"\n",
            i * 8
        ));
    }
    c.push_str(");\n");
    c
}

/// The module definition: its name, its jumps, and its forwarders to the C runtime.
fn def_file(module: &str, names: &[String], runtime: &[String]) -> String {
    let mut def = format!("LIBRARY {module}\nEXPORTS\n");
    for name in names {
        def.push_str(name);
        def.push('\n');
    }
    for name in runtime {
        def.push_str(&format!("{name} = msvcrt.{name}\n"));
    }
    def
}

/// `ProcessPrng` (bcryptprimitives.dll, which Wine 8.0 does not have) on `BCryptGenRandom`.
const PROCESS_PRNG_C: &str = "/* Generated by cargo xtask kit: Rust's std imports ProcessPrng. */\n\
#include <windows.h>\n\
#include <bcrypt.h>\n\
BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {\n\
    while (len) {\n\
        ULONG n = len > 0x10000000 ? 0x10000000 : (ULONG)len;\n\
        if (BCryptGenRandom(NULL, data, n, BCRYPT_USE_SYSTEM_PREFERRED_RNG) != 0) return FALSE;\n\
        data += n;\n\
        len -= n;\n\
    }\n\
    return TRUE;\n\
}\n";

fn gcc(inputs: &[&std::ffi::OsStr], out: &Path, libs: &[&str]) -> Result<(), String> {
    let output = Command::new(MINGW_GCC)
        .args(["-shared", "-O2", "-Wall", "-Werror", "-o"])
        .arg(out)
        .args(inputs)
        .args(libs)
        .output()
        .map_err(|e| format!("cannot run {MINGW_GCC}: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "{MINGW_GCC} could not build {}: {}",
            out.display(),
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    Ok(())
}

fn copy(from: &Path, to: &Path) -> Result<(), String> {
    fs::copy(from, to)
        .map(drop)
        .map_err(|e| format!("cannot copy {} to {}: {e}", from.display(), to.display()))
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The Windows path Wine gives a host path (its `Z:` drive is the root).
fn windows_path(path: &Path) -> Result<String, String> {
    let absolute = fs::canonicalize(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(format!("Z:{}", absolute.display()).replace('/', "\\"))
}

/// Runs `hlk.exe` in the staging folder of `run` under Wine; whether every case passed.
fn run_kit(tools: &Tools, prefix: &Path, run: &Run, kit_args: &[OsString]) -> Result<bool, String> {
    fs::create_dir_all(prefix).map_err(|e| format!("{}: {e}", prefix.display()))?;
    let wine_env = |c: &mut Command| {
        c.env("WINEPREFIX", prefix)
            .env("WINEDEBUG", "-all")
            .env("WINEARCH", "win64")
            .env_remove("DISPLAY");
    };
    // Wine's own services must start without the overrides (winedevice.exe needs Wine's
    // ntoskrnl.exe), and they inherit the first process's output: a persistent server and one
    // process first, their output to a file; the server is stopped after the run.
    let log = prefix.join("wine-start.log");
    let log_file = fs::File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
    let mut server = Command::new(&tools.wineserver);
    wine_env(&mut server);
    server
        .arg("-p")
        .stdin(Stdio::null())
        .stdout(log_file.try_clone().map_err(|e| e.to_string())?)
        .stderr(log_file.try_clone().map_err(|e| e.to_string())?);
    let served = server
        .status()
        .map_err(|e| format!("cannot run {}: {e}", tools.wineserver.display()))?;
    if !served.success() {
        return Err(format!(
            "wineserver did not start (see {}): {served}",
            log.display()
        ));
    }
    let mut start = Command::new(&tools.wine);
    wine_env(&mut start);
    start
        .args(["cmd", "/c", "exit"])
        .stdin(Stdio::null())
        .stdout(log_file.try_clone().map_err(|e| e.to_string())?)
        .stderr(log_file);
    let started = start
        .status()
        .map_err(|e| format!("cannot run {}: {e}", tools.wine.display()))?;
    if !started.success() {
        return Err(format!(
            "Wine did not start (see {}): {started}",
            log.display()
        ));
    }
    let report = run.stage.join("report");
    let mut kit = Command::new(&tools.wine);
    wine_env(&mut kit);
    kit.current_dir(&run.stage)
        .env(
            "WINEDLLOVERRIDES",
            "ndis.sys,ntoskrnl.exe,hal.dll,bcryptprimitives=n",
        )
        .env("DCBNDK_IMAGE", windows_path(&run.stage.join("dcbndk.sys"))?)
        .env("DCBNDK_IMAGE_PROFILE", &run.profile);
    if run.built.is_some() {
        kit.env(
            "DCBNDK_IMAGE_STACK",
            windows_path(&run.stage.join(STACK_TABLE))?,
        );
    }
    kit.arg(run.stage.join("hlk.exe"))
        .arg("--json")
        .arg(format!("{}\\report.json", windows_path(&run.stage)?))
        .arg("--junit")
        .arg(format!("{}\\report.xml", windows_path(&run.stage)?))
        .args(kit_args)
        .stdin(Stdio::null());
    let status = kit
        .status()
        .map_err(|e| format!("cannot run {}: {e}", tools.wine.display()))?;
    // Stops the persistent server (and the services it started), then waits for it to end.
    let _ = Command::new(&tools.wineserver)
        .env("WINEPREFIX", prefix)
        .arg("-k")
        .status();
    let _ = Command::new(&tools.wineserver)
        .env("WINEPREFIX", prefix)
        .arg("-w")
        .status();
    println!(
        "xtask kit: {} against {}: {status}; reports {}.json and .xml",
        run.label,
        run.image.display(),
        report.display()
    );
    Ok(status.success())
}
