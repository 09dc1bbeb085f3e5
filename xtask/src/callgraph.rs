//! The image's call graph, read from its machine code, and the deepest stack path from a function.
//!
//! Nodes are functions as the unwind data delimits them (a chained fragment belongs to the
//! function it continues), plus leaf functions that have no unwind data (they touch no stack but
//! their return address) and the import thunks the linker made. Edges are direct calls, tail
//! jumps (a jump from one function into another: the callee's frame replaces the caller's),
//! calls of imports (through the import address table) and indirect calls, which cannot be
//! followed and are reported. An x64 indirect `jmp` inside a function is a switch table.
//!
//! The depth of a function is its frame plus the deepest of its calls, or the deepest of its
//! tail jumps if that is more; a cycle (recursion) has no bound and is reported as such.

use std::collections::{BTreeMap, BTreeSet};

use iced_x86::{Decoder, DecoderOptions, FlowControl, Instruction, Mnemonic, OpKind, Register};

use crate::target::Arch;
use crate::unwind::{Frame, Memory};

/// What a function calls.
#[derive(Default, Debug)]
pub struct Node {
    /// Its frame in bytes (the largest of its fragments; a leaf's return address).
    pub frame: u64,
    /// Functions it calls directly.
    pub calls: BTreeSet<u32>,
    /// Functions it jumps to (tail calls and fragments).
    pub tails: BTreeSet<u32>,
    /// Kernel routines it calls (module!name).
    pub imports: BTreeSet<String>,
    /// Indirect calls (through a register or memory other than the import table).
    pub indirect_calls: u32,
    /// For an import thunk: the routine it jumps to.
    pub thunk_of: Option<String>,
}

/// The graph of one image.
pub struct Graph {
    pub arch: Arch,
    pub nodes: BTreeMap<u32, Node>,
    /// Functions whose address the code takes (x64 `lea rip+x`, ARM64 `adrp`+`add`): handed to
    /// NDIS or the kernel as callbacks, or called indirectly.
    pub address_taken: BTreeSet<u32>,
    /// Functions whose addresses are stored in the image's data (function-pointer tables,
    /// vtables): what an indirect call may reach.
    pub stored: BTreeSet<u32>,
    /// Code found without unwind data that is not a leaf (it calls or allocates).
    pub problems: Vec<String>,
}

/// Builds the graph from the unwind frames, the code, and the import address table (slot RVA
/// to `module!name`).
pub fn build(
    arch: Arch,
    frames: &[Frame],
    image: &dyn Memory,
    iat: &BTreeMap<u32, String>,
    is_code: &dyn Fn(u32) -> bool,
    stored: &BTreeSet<u32>,
) -> Graph {
    let mut graph = Graph {
        arch,
        nodes: BTreeMap::new(),
        address_taken: BTreeSet::new(),
        stored: BTreeSet::new(),
        problems: Vec::new(),
    };
    let ranges: BTreeMap<u32, (u32, u32)> =
        frames.iter().map(|f| (f.begin, (f.end, f.root))).collect();
    let owner = |rva: u32| -> Option<u32> {
        let (&begin, &(end, root)) = ranges.range(..=rva).next_back()?;
        (rva >= begin && rva < end).then_some(root)
    };
    for frame in frames {
        let node = graph.nodes.entry(frame.root).or_default();
        node.frame = node.frame.max(frame.size);
    }
    let mut pending: Vec<u32> = stored.iter().copied().collect();
    for frame in frames {
        let Some(code) = image.at(frame.begin) else {
            graph.problems.push(format!(
                "function at {:#x} is outside the image",
                frame.begin
            ));
            continue;
        };
        let len = (frame.end.saturating_sub(frame.begin) as usize).min(code.len());
        let refs = scan(arch, frame.begin, &code[..len], iat);
        let node = graph.nodes.entry(frame.root).or_default();
        node.imports.extend(refs.imports);
        node.indirect_calls += refs.indirect_calls;
        for target in refs.calls {
            if !is_code(target) {
                graph.problems.push(format!(
                    "function at {:#x} calls {target:#x}, which is not code",
                    frame.root
                ));
                continue;
            }
            pending.push(target);
            graph
                .nodes
                .entry(frame.root)
                .or_default()
                .calls
                .insert(target);
        }
        for target in refs.jumps {
            if !is_code(target) {
                graph.problems.push(format!(
                    "function at {:#x} jumps to {target:#x}, which is not code",
                    frame.root
                ));
                continue;
            }
            // A jump that stays inside the function is control flow, not a call.
            if owner(target) == Some(frame.root) {
                continue;
            }
            pending.push(target);
            graph
                .nodes
                .entry(frame.root)
                .or_default()
                .tails
                .insert(target);
        }
        for target in refs.addresses {
            if is_code(target) {
                graph.address_taken.insert(target);
                pending.push(target);
            }
        }
    }
    // Resolve targets: into the function that owns them, or a leaf/thunk without unwind data.
    let mut leaves: BTreeMap<u32, u32> = BTreeMap::new(); // target -> node key
    for target in pending {
        if owner(target).is_some() || leaves.contains_key(&target) {
            continue;
        }
        leaves.insert(target, target);
        // A leaf ends before the next function the unwind data knows.
        let limit = ranges
            .range(target..)
            .next()
            .map_or(4096, |(&next, _)| (next - target) as usize);
        let node = leaf(arch, target, limit, image, iat, &mut graph.problems);
        graph.nodes.insert(target, node);
    }
    // Re-key every edge and address to the owning function's root.
    let key = |rva: u32| owner(rva).unwrap_or(rva);
    for node in graph.nodes.values_mut() {
        node.calls = node.calls.iter().map(|&t| key(t)).collect();
        node.tails = node.tails.iter().map(|&t| key(t)).collect();
    }
    graph.address_taken = graph.address_taken.iter().map(|&t| key(t)).collect();
    graph.stored = stored.iter().map(|&t| key(t)).collect();
    // An indirect call may reach any function whose address the image stores in its data:
    // conservative, but finite, and it keeps the callbacks handed to NDIS (whose addresses are
    // taken in code, not stored) out of the driver's own call graph.
    let stored_targets = graph.stored.clone();
    for node in graph.nodes.values_mut() {
        if node.indirect_calls > 0 {
            node.calls.extend(stored_targets.iter().copied());
        }
    }
    graph
}

/// What one function's code refers to.
#[derive(Default)]
struct Refs {
    calls: Vec<u32>,
    jumps: Vec<u32>,
    imports: Vec<String>,
    addresses: Vec<u32>,
    indirect_calls: u32,
}

fn scan(arch: Arch, begin: u32, code: &[u8], iat: &BTreeMap<u32, String>) -> Refs {
    match arch {
        Arch::X64 => scan_x64(begin, code, iat),
        Arch::Arm64 => scan_arm64(begin, code, iat),
    }
}

/// The import each register is loaded with anywhere in the function (`mov reg, [rip+slot]`),
/// when it is loaded with exactly one: a loop whose body calls through a register the compiler
/// loads at the loop's end (a block at a higher address than the call) is resolved by this, not
/// by address order.
fn register_imports_x64(
    begin: u32,
    code: &[u8],
    iat: &BTreeMap<u32, String>,
) -> BTreeMap<Register, String> {
    let mut seen: BTreeMap<Register, BTreeSet<String>> = BTreeMap::new();
    let mut decoder = Decoder::with_ip(64, code, u64::from(begin), DecoderOptions::NONE);
    let mut instruction = Instruction::default();
    while decoder.can_decode() {
        decoder.decode_out(&mut instruction);
        if instruction.mnemonic() == Mnemonic::Mov
            && instruction.op0_kind() == OpKind::Register
            && instruction.is_ip_rel_memory_operand()
            && let Some(name) = u32::try_from(instruction.ip_rel_memory_address())
                .ok()
                .and_then(|slot| iat.get(&slot))
        {
            seen.entry(instruction.op0_register().full_register())
                .or_default()
                .insert(name.clone());
        }
    }
    seen.into_iter()
        .filter_map(|(r, names)| {
            (names.len() == 1)
                .then(|| names.into_iter().next())
                .flatten()
                .map(|n| (r, n))
        })
        .collect()
}

/// x64 code is decoded with iced-x86; RVAs are used as instruction pointers. An import is called
/// either straight through its slot (`call [rip+slot]`) or, when a function calls it more than
/// once, through a register loaded from the slot (`mov rsi, [rip+slot]` ... `call rsi`).
fn scan_x64(begin: u32, code: &[u8], iat: &BTreeMap<u32, String>) -> Refs {
    let mut refs = Refs::default();
    let anywhere = register_imports_x64(begin, code, iat);
    let mut decoder = Decoder::with_ip(64, code, u64::from(begin), DecoderOptions::NONE);
    let mut instruction = Instruction::default();
    let mut holds: BTreeMap<Register, String> = BTreeMap::new();
    // As on ARM64 (see scan_arm64): the import a register was last loaded with, by address order.
    let mut last_import: BTreeMap<Register, String> = BTreeMap::new();
    while decoder.can_decode() {
        decoder.decode_out(&mut instruction);
        let rip_target = (instruction.is_ip_rel_memory_operand())
            .then(|| u32::try_from(instruction.ip_rel_memory_address()).ok())
            .flatten();
        let register_import = || {
            let register = instruction.op0_register().full_register();
            (instruction.op0_kind() == OpKind::Register)
                .then(|| {
                    holds
                        .get(&register)
                        .or_else(|| last_import.get(&register))
                        .or_else(|| anywhere.get(&register))
                })
                .flatten()
                .cloned()
        };
        match instruction.flow_control() {
            FlowControl::Call => push_near(&mut refs.calls, &instruction),
            FlowControl::UnconditionalBranch | FlowControl::ConditionalBranch => {
                push_near(&mut refs.jumps, &instruction)
            }
            FlowControl::IndirectCall => {
                match rip_target
                    .and_then(|slot| iat.get(&slot))
                    .cloned()
                    .or_else(register_import)
                {
                    Some(name) => refs.imports.push(name),
                    None => refs.indirect_calls += 1,
                }
            }
            FlowControl::IndirectBranch => {
                if let Some(name) = rip_target
                    .and_then(|slot| iat.get(&slot))
                    .cloned()
                    .or_else(register_import)
                {
                    refs.imports.push(name);
                }
                // Otherwise a switch table's jump inside the function.
            }
            _ => {
                if instruction.mnemonic() == Mnemonic::Lea
                    && let Some(target) = rip_target
                {
                    refs.addresses.push(target);
                }
                if instruction.op0_kind() == OpKind::Register {
                    let written = instruction.op0_register().full_register();
                    let is_mov = instruction.mnemonic() == Mnemonic::Mov;
                    let loaded = is_mov
                        .then(|| rip_target.and_then(|slot| iat.get(&slot)).cloned())
                        .flatten()
                        .or_else(|| {
                            // A copy of a register that holds an import.
                            (is_mov && instruction.op1_kind() == OpKind::Register)
                                .then(|| holds.get(&instruction.op1_register().full_register()))
                                .flatten()
                                .cloned()
                        });
                    match loaded {
                        Some(name) => {
                            last_import.insert(written, name.clone());
                            holds.insert(written, name);
                        }
                        None => {
                            holds.remove(&written);
                        }
                    }
                }
            }
        }
    }
    refs
}

fn push_near(into: &mut Vec<u32>, instruction: &Instruction) {
    if matches!(
        instruction.op0_kind(),
        OpKind::NearBranch16 | OpKind::NearBranch32 | OpKind::NearBranch64
    ) && let Ok(target) = u32::try_from(instruction.near_branch_target())
    {
        into.push(target);
    }
}

/// ARM64 code has fixed 4-byte instructions; the few forms that matter here are decoded from
/// their encodings (Arm ARM, C4.1): BL, B, B.cond/CBZ/CBNZ/TBZ/TBNZ, BLR, BR, ADRP, ADD
/// (immediate, 64-bit) and LDR (immediate, unsigned offset, 64-bit). ADRP followed by ADD takes
/// an address; ADRP followed by LDR reads an import address table slot.
fn scan_arm64(begin: u32, code: &[u8], iat: &BTreeMap<u32, String>) -> Refs {
    let mut refs = Refs::default();
    let mut page: [Option<u64>; 32] = [None; 32];
    let mut loaded: [Option<u32>; 32] = [None; 32];
    // The import slot each register was last loaded from anywhere earlier in the function: a
    // callee-saved register that holds an import across branches and epilogs (the compiler
    // hoists the load when it calls the import more than once) is followed by address order,
    // not by the control flow a linear scan cannot see.
    let mut last_import: [Option<u32>; 32] = [None; 32];
    for (index, word) in code.chunks_exact(4).enumerate() {
        let w = u32::from_le_bytes([word[0], word[1], word[2], word[3]]);
        let pc = u64::from(begin) + 4 * index as u64;
        let rd = (w & 0x1F) as usize;
        let rn = ((w >> 5) & 0x1F) as usize;
        let branch = |imm26: u32| {
            let offset = (i64::from((imm26 << 6) as i32) >> 6) * 4;
            u32::try_from(pc as i64 + offset).ok()
        };
        if w & 0xFC00_0000 == 0x9400_0000 {
            refs.calls.extend(branch(w & 0x03FF_FFFF));
        } else if w & 0xFC00_0000 == 0x1400_0000 {
            refs.jumps.extend(branch(w & 0x03FF_FFFF));
        } else if w & 0xFFFF_FC1F == 0xD63F_0000 {
            // BLR Xn
            match loaded[rn]
                .or(last_import[rn])
                .and_then(|slot| iat.get(&slot))
            {
                Some(name) => refs.imports.push(name.clone()),
                None => refs.indirect_calls += 1,
            }
        } else if w & 0xFFFF_FC1F == 0xD61F_0000 {
            // BR Xn: a jump through an import slot, else a switch table inside the function.
            if let Some(name) = loaded[rn].and_then(|slot| iat.get(&slot)) {
                refs.imports.push(name.clone());
            }
        } else if w & 0x9F00_0000 == 0x9000_0000 {
            // ADRP Xd, label
            let immlo = u64::from((w >> 29) & 3);
            let immhi = u64::from((w >> 5) & 0x7_FFFF);
            let imm = (((immhi << 2) | immlo) << 44) as i64 >> 44 << 12;
            page[rd] = Some(((pc & !0xFFF) as i64 + imm) as u64);
            loaded[rd] = None;
            continue;
        } else if w & 0xFF80_0000 == 0x9100_0000 {
            // ADD Xd, Xn, #imm{, LSL #12}
            let shift = if w & (1 << 22) != 0 { 12 } else { 0 };
            let imm = u64::from((w >> 10) & 0xFFF) << shift;
            if let Some(base) = page[rn]
                && let Ok(address) = u32::try_from(base + imm)
            {
                refs.addresses.push(address);
            }
            page[rd] = None;
            loaded[rd] = None;
            continue;
        } else if w & 0xFFC0_0000 == 0xF940_0000 {
            // LDR Xt, [Xn, #imm * 8]
            let imm = u64::from((w >> 10) & 0xFFF) * 8;
            let slot = page[rn].and_then(|base| u32::try_from(base + imm).ok());
            page[rd] = None;
            loaded[rd] = slot;
            if slot.is_some_and(|slot| iat.contains_key(&slot)) {
                last_import[rd] = slot;
            }
            continue;
        }
        for written in arm64_written_registers(w) {
            page[written] = None;
            loaded[written] = None;
        }
    }
    refs
}

/// The general registers an ARM64 instruction writes (Arm ARM C4.1, by the top-level encoding
/// groups): data processing writes Rd; loads write Rt (and Rt2 for pairs) and a pre- or
/// post-indexed access writes back its base; BL/BLR write x30; MRS writes Rt. Stores, branches
/// and SIMD/FP data processing write no general register.
fn arm64_written_registers(w: u32) -> Vec<usize> {
    let rd = (w & 0x1F) as usize;
    let rn = ((w >> 5) & 0x1F) as usize;
    let rt2 = ((w >> 10) & 0x1F) as usize;
    let op0 = (w >> 25) & 0xF;
    match op0 {
        // Data processing, immediate (100x) and register (x101).
        0b1000 | 0b1001 | 0b0101 | 0b1101 => vec![rd],
        // Branches, exceptions, system (101x).
        0b1010 | 0b1011 => {
            if w & 0xFC00_0000 == 0x9400_0000 || w & 0xFFFF_FC1F == 0xD63F_0000 {
                vec![30]
            } else if w & 0xFFF0_0000 == 0xD530_0000 {
                vec![rd]
            } else {
                Vec::new()
            }
        }
        // Loads and stores (x1x0).
        0b0100 | 0b0110 | 0b1100 | 0b1110 => {
            let simd = w & (1 << 26) != 0;
            let pair = (w >> 27) & 0x7 == 0b101;
            let load = w & (1 << 22) != 0;
            let mut written = Vec::new();
            if load && !simd {
                written.push(rd);
                if pair {
                    written.push(rt2);
                }
            }
            // Pre/post-indexed forms write back the base register.
            let writeback = if pair {
                matches!((w >> 23) & 0x3, 0b01 | 0b11)
            } else {
                (w >> 24) & 0x3 == 0b00 && (w >> 21) & 1 == 0 && (w >> 10) & 0x1 == 1
            };
            if writeback {
                written.push(rn);
            }
            written
        }
        _ => Vec::new(),
    }
}

/// A function without unwind data: an import thunk, or a leaf that must touch no stack.
fn leaf(
    arch: Arch,
    target: u32,
    limit: usize,
    image: &dyn Memory,
    iat: &BTreeMap<u32, String>,
    problems: &mut Vec<String>,
) -> Node {
    let return_address = match arch {
        Arch::X64 => 8,
        Arch::Arm64 => 0,
    };
    let mut node = Node {
        frame: return_address,
        ..Node::default()
    };
    let Some(code) = image.at(target) else {
        problems.push(format!("call target {target:#x} is outside the image"));
        return node;
    };
    let code = &code[..code.len().min(limit).min(4096)];
    match arch {
        Arch::X64 => {
            let mut decoder = Decoder::with_ip(64, code, u64::from(target), DecoderOptions::NONE);
            let mut instruction = Instruction::default();
            while decoder.can_decode() {
                decoder.decode_out(&mut instruction);
                let slot = instruction
                    .is_ip_rel_memory_operand()
                    .then(|| u32::try_from(instruction.ip_rel_memory_address()).ok())
                    .flatten();
                match instruction.flow_control() {
                    FlowControl::Return => break,
                    FlowControl::IndirectBranch => {
                        if let Some(name) = slot.and_then(|s| iat.get(&s)) {
                            node.thunk_of = Some(name.clone());
                            node.frame = 0;
                        }
                        break;
                    }
                    FlowControl::UnconditionalBranch => {
                        if let OpKind::NearBranch64 = instruction.op0_kind()
                            && let Ok(t) = u32::try_from(instruction.near_branch_target())
                            && (t < target || t > target + code.len() as u32)
                        {
                            node.tails.insert(t);
                            break;
                        }
                    }
                    FlowControl::Call | FlowControl::IndirectCall => {
                        problems.push(format!(
                            "function at {target:#x} calls but has no unwind data"
                        ));
                        break;
                    }
                    _ => {
                        let pushes = matches!(instruction.mnemonic(), Mnemonic::Push)
                            || (instruction.mnemonic() == Mnemonic::Sub
                                && instruction.op0_register() == Register::RSP);
                        if pushes {
                            problems.push(format!(
                                "function at {target:#x} moves the stack pointer but has no unwind data"
                            ));
                            break;
                        }
                    }
                }
            }
        }
        Arch::Arm64 => {
            // An import thunk: ADRP x16; LDR x16, [x16, #off]; BR x16.
            let refs = scan_arm64(target, &code[..code.len().min(12)], iat);
            if let Some(name) = refs.imports.first() {
                node.thunk_of = Some(name.clone());
            } else {
                for word in code.chunks_exact(4) {
                    let w = u32::from_le_bytes([word[0], word[1], word[2], word[3]]);
                    if w == 0xD65F_03C0 {
                        break; // RET
                    }
                    if w & 0xFC00_0000 == 0x9400_0000 || w & 0xFFFF_FC1F == 0xD63F_0000 {
                        problems.push(format!(
                            "function at {target:#x} calls but has no unwind data"
                        ));
                        break;
                    }
                }
            }
        }
    }
    node
}

/// The deepest path from a function: its bytes and the functions it runs through.
#[derive(Clone, Debug)]
pub enum Depth {
    /// Bounded: the bytes of the deepest path and its frames (RVA, frame bytes).
    Bounded { bytes: u64, path: Vec<(u32, u64)> },
    /// A cycle is reachable: the functions on it.
    Recursive { cycle: Vec<u32> },
}

impl Graph {
    /// The deepest path from `root`.
    pub fn depth(&self, root: u32) -> Depth {
        let mut memo = BTreeMap::new();
        let mut stack = Vec::new();
        self.depth_of(root, &mut memo, &mut stack)
    }

    fn depth_of(&self, rva: u32, memo: &mut BTreeMap<u32, Depth>, stack: &mut Vec<u32>) -> Depth {
        if let Some(done) = memo.get(&rva) {
            return done.clone();
        }
        if let Some(at) = stack.iter().position(|&r| r == rva) {
            return Depth::Recursive {
                cycle: stack[at..].to_vec(),
            };
        }
        let Some(node) = self.nodes.get(&rva) else {
            return Depth::Bounded {
                bytes: 0,
                path: vec![(rva, 0)],
            };
        };
        stack.push(rva);
        let mut deepest_call: Option<(u64, Vec<(u32, u64)>)> = None;
        let mut deepest_tail: Option<(u64, Vec<(u32, u64)>)> = None;
        for (edges, best) in [
            (&node.calls, &mut deepest_call),
            (&node.tails, &mut deepest_tail),
        ] {
            for &callee in edges {
                match self.depth_of(callee, memo, stack) {
                    Depth::Recursive { cycle } => {
                        stack.pop();
                        return Depth::Recursive { cycle };
                    }
                    Depth::Bounded { bytes, path } => {
                        if best.as_ref().is_none_or(|(b, _)| bytes > *b) {
                            *best = Some((bytes, path));
                        }
                    }
                }
            }
        }
        stack.pop();
        // A call into the kernel pushes a return address (x64); the kernel's own frames are not
        // counted here.
        let import_call = if node.imports.is_empty() { 0 } else { 8 };
        let import_call = if self.arch == Arch::X64 {
            import_call
        } else {
            0
        };
        let (call_bytes, call_path) = deepest_call.unwrap_or((import_call, Vec::new()));
        let through_calls = node.frame + call_bytes.max(import_call);
        let mut path = vec![(rva, node.frame)];
        let result = match deepest_tail {
            Some((tail_bytes, tail_path)) if tail_bytes > through_calls => {
                // The callee's frame replaces this one's.
                path = vec![(rva, 0)];
                path.extend(tail_path);
                Depth::Bounded {
                    bytes: tail_bytes,
                    path,
                }
            }
            _ => {
                path.extend(call_path);
                Depth::Bounded {
                    bytes: through_calls,
                    path,
                }
            }
        };
        memo.insert(rva, result.clone());
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(edges: &[(u32, u64, &[u32], &[u32])]) -> Graph {
        let mut nodes = BTreeMap::new();
        for &(rva, frame, calls, tails) in edges {
            nodes.insert(
                rva,
                Node {
                    frame,
                    calls: calls.iter().copied().collect(),
                    tails: tails.iter().copied().collect(),
                    ..Node::default()
                },
            );
        }
        Graph {
            arch: Arch::X64,
            nodes,
            address_taken: BTreeSet::new(),
            stored: BTreeSet::new(),
            problems: Vec::new(),
        }
    }

    #[test]
    fn the_deepest_path_adds_frames_along_calls() {
        let g = graph(&[
            (1, 100, &[2, 3], &[]),
            (2, 50, &[], &[]),
            (3, 70, &[4], &[]),
            (4, 8, &[], &[]),
        ]);
        let Depth::Bounded { bytes, path } = g.depth(1) else {
            panic!("recursion");
        };
        assert_eq!(bytes, 178);
        assert_eq!(path.iter().map(|p| p.0).collect::<Vec<_>>(), [1, 3, 4]);
    }

    #[test]
    fn a_tail_jump_replaces_the_frame() {
        // 1 (frame 100) tail-jumps to 2 (frame 300): the deepest is 300, not 400.
        let g = graph(&[(1, 100, &[], &[2]), (2, 300, &[], &[])]);
        assert!(matches!(g.depth(1), Depth::Bounded { bytes: 300, .. }));
    }

    #[test]
    fn recursion_is_unbounded() {
        let g = graph(&[(1, 8, &[2], &[]), (2, 8, &[3], &[]), (3, 8, &[2], &[])]);
        let Depth::Recursive { cycle } = g.depth(1) else {
            panic!("bounded");
        };
        assert_eq!(cycle, [2, 3]);
    }

    #[test]
    fn x64_imports_are_followed_through_the_slot_and_through_a_register() {
        let iat = BTreeMap::from([(0x2000, "ndis.sys!NdisMSleep".to_owned())]);
        // 0x1000: call [rip+0xffa]  (next ip 0x1006 + 0xffa = 0x2000)
        // 0x1006: mov rsi, [rip+0xff3] (next ip 0x100d + 0xff3 = 0x2000)
        // 0x100d: call rsi
        // 0x100f: call rax             (unknown)
        let code = [
            0xFF, 0x15, 0xFA, 0x0F, 0x00, 0x00, //
            0x48, 0x8B, 0x35, 0xF3, 0x0F, 0x00, 0x00, //
            0xFF, 0xD6, //
            0xFF, 0xD0,
        ];
        let refs = scan_x64(0x1000, &code, &iat);
        assert_eq!(refs.imports, ["ndis.sys!NdisMSleep", "ndis.sys!NdisMSleep"]);
        assert_eq!(refs.indirect_calls, 1);
    }

    #[test]
    fn arm64_bl_b_and_an_import_through_adrp_ldr_blr_are_read() {
        let iat = BTreeMap::from([(0x3008, "ntoskrnl.exe!KeBugCheckEx".to_owned())]);
        let words: [u32; 5] = [
            0x9400_0004, // bl +16 -> 0x1010
            0xD000_0008, // adrp x8, two pages on from 0x1000: 0x3000
            0xF940_0508, // ldr x8, [x8, #8]
            0xD63F_0100, // blr x8
            0x17FF_FFFC, // b -16 -> 0x1000
        ];
        let code: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let refs = scan_arm64(0x1000, &code, &iat);
        assert_eq!(refs.calls, [0x1010]);
        assert_eq!(refs.jumps, [0x1000]);
        assert_eq!(refs.imports, ["ntoskrnl.exe!KeBugCheckEx"]);
        assert_eq!(refs.indirect_calls, 0);
    }
}
