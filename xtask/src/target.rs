//! The images `cargo xtask pe` builds: two architectures by two profiles.

/// A Windows architecture the driver is built for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arch {
    /// x86_64-pc-windows-msvc
    X64,
    /// aarch64-pc-windows-msvc
    Arm64,
}

impl Arch {
    /// Both, in the order they are built and reported.
    pub const ALL: [Self; 2] = [Self::X64, Self::Arm64];

    /// The Rust target triple.
    pub const fn triple(self) -> &'static str {
        match self {
            Self::X64 => "x86_64-pc-windows-msvc",
            Self::Arm64 => "aarch64-pc-windows-msvc",
        }
    }

    /// The folder name of its export lists.
    pub const fn name(self) -> &'static str {
        match self {
            Self::X64 => "x86_64",
            Self::Arm64 => "aarch64",
        }
    }

    /// What the README's table calls it.
    pub const fn label(self) -> &'static str {
        match self {
            Self::X64 => "x64",
            Self::Arm64 => "ARM64",
        }
    }
}

/// A cargo profile the driver is built with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    /// `release` (LTO, one codegen unit): what ships.
    Release,
    /// `dev`: what a developer debugs on a VM.
    Dev,
}

impl Profile {
    /// Both, in the order they are built and reported.
    pub const ALL: [Self; 2] = [Self::Release, Self::Dev];

    /// The cargo profile name (and the folder under target/pe/<triple>/).
    pub const fn name(self) -> &'static str {
        match self {
            Self::Release => "release",
            Self::Dev => "dev",
        }
    }

    /// The folder cargo writes the profile's artifacts to.
    pub const fn cargo_dir(self) -> &'static str {
        match self {
            Self::Release => "release",
            Self::Dev => "debug",
        }
    }
}
