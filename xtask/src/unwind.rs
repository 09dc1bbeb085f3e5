//! Stack frame sizes from the image's own unwind data (.pdata and .xdata): what the kernel's
//! unwinder and debugger believe each function allocates, read the way they read it.
//!
//! x64: RUNTIME_FUNCTION {Begin, End, UnwindInfo} and UNWIND_INFO codes (Microsoft's "x64
//! exception handling"): every push, allocation and machine frame adds to the frame; chained
//! entries (UNW_FLAG_CHAININFO) describe a fragment of a parent function and add the parent's.
//! ARM64: {Begin, UnwindData} with packed or .xdata unwind codes (Microsoft's "ARM64 exception
//! handling"): the allocations of the prolog codes, or the packed form's FrameSize.

use crate::target::Arch;

/// One function (or fragment) the unwind data describes.
#[derive(Clone, Debug)]
pub struct Frame {
    /// RVA of its first instruction.
    pub begin: u32,
    /// RVA one past its last instruction.
    pub end: u32,
    /// Bytes it takes from the stack while its body runs, return address included (x64; on
    /// ARM64 the return address stays in LR or is saved inside the frame).
    pub size: u64,
    /// The RVA of the function this is a fragment of (x64 chained unwind info), else `begin`.
    pub root: u32,
}

/// Reads a little-endian u32 at `offset` of `bytes`.
fn u32_at(bytes: &[u8], offset: usize) -> Option<u32> {
    let raw = bytes.get(offset..offset.checked_add(4)?)?;
    Some(u32::from_le_bytes([raw[0], raw[1], raw[2], raw[3]]))
}

/// Reads a little-endian u16 at `offset` of `bytes`.
fn u16_at(bytes: &[u8], offset: usize) -> Option<u16> {
    let raw = bytes.get(offset..offset.checked_add(2)?)?;
    Some(u16::from_le_bytes([raw[0], raw[1]]))
}

/// The image's bytes at an RVA, as the loader maps them.
pub trait Memory {
    /// `len` bytes at `rva`, or fewer when the section ends first.
    fn at(&self, rva: u32) -> Option<&[u8]>;
}

/// Every function the exception directory `pdata` describes.
pub fn frames(arch: Arch, pdata: &[u8], image: &dyn Memory) -> Result<Vec<Frame>, String> {
    match arch {
        Arch::X64 => x64_frames(pdata, image),
        Arch::Arm64 => arm64_frames(pdata, image),
    }
}

fn x64_frames(pdata: &[u8], image: &dyn Memory) -> Result<Vec<Frame>, String> {
    let mut frames = Vec::new();
    for entry in pdata.chunks_exact(12) {
        let (Some(begin), Some(end), Some(info)) =
            (u32_at(entry, 0), u32_at(entry, 4), u32_at(entry, 8))
        else {
            continue;
        };
        if begin == 0 && end == 0 {
            continue;
        }
        let (size, root) = x64_unwind_size(image, info, begin, 0)?;
        frames.push(Frame {
            begin,
            end,
            size: size + 8,
            root,
        });
    }
    Ok(frames)
}

/// The bytes UNWIND_INFO at `info` allocates, with its chain, and the chain's root function.
fn x64_unwind_size(
    image: &dyn Memory,
    info: u32,
    begin: u32,
    depth: u32,
) -> Result<(u64, u32), String> {
    if depth > 32 {
        return Err(format!("unwind chain at {info:#x} does not end"));
    }
    let bytes = image
        .at(info)
        .ok_or_else(|| format!("UNWIND_INFO at {info:#x} is outside the image"))?;
    let header = bytes
        .get(..4)
        .ok_or_else(|| format!("UNWIND_INFO at {info:#x} is cut short"))?;
    let flags = header[0] >> 3;
    let count = usize::from(header[2]);
    let mut size = 0u64;
    let mut index = 0;
    while index < count {
        let code = u16_at(bytes, 4 + 2 * index)
            .ok_or_else(|| format!("UNWIND_INFO at {info:#x} is cut short"))?;
        let op = (code >> 8) & 0x0F;
        let op_info = u64::from(code >> 12);
        let slot = |n: usize| {
            u16_at(bytes, 4 + 2 * (index + n))
                .map(u64::from)
                .ok_or_else(|| format!("UNWIND_INFO at {info:#x} is cut short"))
        };
        let (bytes_allocated, slots) = match op {
            0 => (8, 1),                                   // UWOP_PUSH_NONVOL
            1 if op_info == 0 => (slot(1)? * 8, 2),        // UWOP_ALLOC_LARGE, scaled
            1 => (slot(1)? | (slot(2)? << 16), 3),         // UWOP_ALLOC_LARGE, unscaled
            2 => (op_info * 8 + 8, 1),                     // UWOP_ALLOC_SMALL
            3 => (0, 1),                                   // UWOP_SET_FPREG
            4 => (0, 2),                                   // UWOP_SAVE_NONVOL
            5 => (0, 3),                                   // UWOP_SAVE_NONVOL_FAR
            6 => (0, 2),                                   // UWOP_EPILOG (version 2)
            8 => (0, 2),                                   // UWOP_SAVE_XMM128
            9 => (0, 3),                                   // UWOP_SAVE_XMM128_FAR
            10 => (if op_info == 0 { 40 } else { 48 }, 1), // UWOP_PUSH_MACHFRAME
            _ => {
                return Err(format!(
                    "UNWIND_INFO at {info:#x}: unknown unwind code {op}"
                ));
            }
        };
        size += bytes_allocated;
        index += slots;
    }
    // UNW_FLAG_CHAININFO: a RUNTIME_FUNCTION of the parent follows the (even) code array.
    if flags & 0x4 != 0 {
        let at = 4 + 2 * (count + (count & 1));
        let parent_begin = u32_at(bytes, at)
            .ok_or_else(|| format!("chained UNWIND_INFO at {info:#x} is cut short"))?;
        let parent_info = u32_at(bytes, at + 8)
            .ok_or_else(|| format!("chained UNWIND_INFO at {info:#x} is cut short"))?;
        let (parent, root) = x64_unwind_size(image, parent_info, parent_begin, depth + 1)?;
        return Ok((size + parent, root));
    }
    Ok((size, begin))
}

fn arm64_frames(pdata: &[u8], image: &dyn Memory) -> Result<Vec<Frame>, String> {
    let mut frames = Vec::new();
    for entry in pdata.chunks_exact(8) {
        let (Some(begin), Some(data)) = (u32_at(entry, 0), u32_at(entry, 4)) else {
            continue;
        };
        if begin == 0 && data == 0 {
            continue;
        }
        let (length, size) = match data & 3 {
            // Packed: Flag(2) FunctionLength(11) RegF(3) RegI(4) H(1) CR(2) FrameSize(9).
            1 | 2 => {
                let length = ((data >> 2) & 0x7FF) * 4;
                let frame = u64::from((data >> 23) & 0x1FF) * 16;
                (length, frame)
            }
            0 => arm64_xdata(image, data)?,
            _ => return Err(format!("pdata entry at {begin:#x} has the reserved flag 3")),
        };
        frames.push(Frame {
            begin,
            end: begin + length,
            size,
            root: begin,
        });
    }
    Ok(frames)
}

/// The function length and the bytes the prolog's unwind codes allocate, from .xdata at `rva`.
fn arm64_xdata(image: &dyn Memory, rva: u32) -> Result<(u32, u64), String> {
    let bytes = image
        .at(rva)
        .ok_or_else(|| format!(".xdata at {rva:#x} is outside the image"))?;
    let short = || format!(".xdata at {rva:#x} is cut short");
    let header = u32_at(bytes, 0).ok_or_else(short)?;
    let length = (header & 0x3_FFFF) * 4;
    let e = (header >> 21) & 1;
    let mut epilogs = (header >> 22) & 0x1F;
    let mut words = (header >> 27) & 0x1F;
    let mut at = 4usize;
    if epilogs == 0 && words == 0 {
        let extended = u32_at(bytes, 4).ok_or_else(short)?;
        epilogs = extended & 0xFFFF;
        words = (extended >> 16) & 0xFF;
        at = 8;
    }
    // Where each epilog's codes start: E = 1 means one epilog whose codes start at the index in
    // the count field; otherwise a scope word per epilog, its start index in bits 22..31.
    let mut epilog_starts = Vec::new();
    if e == 1 {
        epilog_starts.push(epilogs as usize);
    } else {
        for scope in 0..epilogs as usize {
            let word = u32_at(bytes, at + 4 * scope).ok_or_else(short)?;
            epilog_starts.push((word >> 22) as usize);
        }
        at += 4 * epilogs as usize;
    }
    let codes = bytes.get(at..at + 4 * words as usize).ok_or_else(short)?;
    // With a frame pointer, the prolog need not describe the allocation made after `add_fp`
    // (the unwinder recovers sp from x29), and LLVM leaves it out; the epilogs, which undo it,
    // describe it. The frame is the largest of the prolog's and the epilogs' allocations.
    let mut size =
        arm64_prolog_allocation(codes).map_err(|e| format!(".xdata at {rva:#x}: {e}"))?;
    for start in epilog_starts {
        let epilog = codes
            .get(start..)
            .ok_or_else(|| format!(".xdata at {rva:#x}: epilog codes at {start} outside"))?;
        size = size
            .max(arm64_prolog_allocation(epilog).map_err(|e| format!(".xdata at {rva:#x}: {e}"))?);
    }
    Ok((length, size))
}

/// Sums the allocations of ARM64 unwind codes (a prolog's or an epilog's) up to their `end`.
fn arm64_prolog_allocation(codes: &[u8]) -> Result<u64, String> {
    let mut size = 0u64;
    let mut i = 0usize;
    let byte = |i: usize| {
        codes
            .get(i)
            .copied()
            .map(u64::from)
            .ok_or("unwind codes cut short")
    };
    while i < codes.len() {
        let b = byte(i)?;
        let (allocated, len) = match b {
            0x00..=0x1F => ((b & 0x1F) * 16, 1),      // alloc_s
            0x20..=0x3F => ((b & 0x1F) * 8, 1),       // save_r19r20_x
            0x40..=0x7F => (0, 1),                    // save_fplr
            0x80..=0xBF => (((b & 0x3F) + 1) * 8, 1), // save_fplr_x
            0xC0..=0xC7 => ((((b & 7) << 8) | byte(i + 1)?) * 16, 2), // alloc_m
            0xC8..=0xCB => (0, 2),                    // save_regp
            0xCC..=0xCF => (((byte(i + 1)? & 0x3F) + 1) * 8, 2), // save_regp_x
            0xD0..=0xD3 => (0, 2),                    // save_reg
            0xD4..=0xD5 => (((byte(i + 1)? & 0x1F) + 1) * 8, 2), // save_reg_x
            0xD6..=0xD7 => (0, 2),                    // save_lrpair
            0xD8..=0xD9 => (0, 2),                    // save_fregp
            0xDA..=0xDB => (((byte(i + 1)? & 0x3F) + 1) * 8, 2), // save_fregp_x
            0xDC..=0xDD => (0, 2),                    // save_freg
            0xDE => (((byte(i + 1)? & 0x1F) + 1) * 8, 2), // save_freg_x
            0xE0 => {
                // alloc_l: 24-bit count of 16-byte units
                let units = (byte(i + 1)? << 16) | (byte(i + 2)? << 8) | byte(i + 3)?;
                (units * 16, 4)
            }
            0xE1 | 0xE3 | 0xE6 | 0xFC => (0, 1), // set_fp, nop, save_next, pac_sign_lr
            0xE2 => (0, 2),                      // add_fp
            0xE4 | 0xE5 => return Ok(size),      // end, end_c
            0xE7 => {
                // save_any_reg: 0pxrrrrr ffoooooo; x = pre-indexed, allocating (o + 1) * 16
                let pre_indexed = byte(i + 1)? & 0x20 != 0;
                let offset = byte(i + 2)? & 0x3F;
                (if pre_indexed { (offset + 1) * 16 } else { 0 }, 3)
            }
            _ => return Err(format!("unwind code {b:#04x} is not understood")),
        };
        size += allocated;
        i += len;
    }
    Ok(size)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Image memory for tests: bytes at RVAs.
    struct Bytes(Vec<(u32, Vec<u8>)>);

    impl Memory for Bytes {
        fn at(&self, rva: u32) -> Option<&[u8]> {
            self.0.iter().find_map(|(start, bytes)| {
                let offset = usize::try_from(rva.checked_sub(*start)?).ok()?;
                bytes.get(offset..)
            })
        }
    }

    fn pdata_x64(entries: &[(u32, u32, u32)]) -> Vec<u8> {
        entries
            .iter()
            .flat_map(|&(b, e, u)| [b, e, u].into_iter().flat_map(u32::to_le_bytes))
            .collect()
    }

    #[test]
    fn x64_pushes_allocations_and_the_return_address_make_the_frame() {
        // push rbx; push rsi; sub rsp, 0x1000 (UWOP_ALLOC_LARGE scaled: 0x200 * 8).
        let info = vec![
            1, 9, 4, 0, //
            9, 0x01, 0x00, 0x02, // offset 9: ALLOC_LARGE, info 0; next slot 0x0200
            2, 0x60, // offset 2: PUSH_NONVOL rsi
            1, 0x30, // offset 1: PUSH_NONVOL rbx
        ];
        let image = Bytes(vec![(0x3000, info)]);
        let frames = frames(Arch::X64, &pdata_x64(&[(0x1000, 0x1100, 0x3000)]), &image).unwrap();
        assert_eq!(frames.len(), 1);
        assert_eq!(frames[0].size, 0x1000 + 16 + 8);
        assert_eq!(frames[0].root, 0x1000);
    }

    #[test]
    fn x64_a_chained_fragment_adds_its_parents_frame_and_belongs_to_it() {
        let parent = vec![1, 4, 1, 0, 4, 0x72, 0, 0]; // sub rsp, 0x40 (ALLOC_SMALL 7)
        let mut fragment = vec![(0x4 << 3) | 1, 0, 1, 0, 0, 0x30, 0, 0];
        fragment.extend(pdata_x64(&[(0x1000, 0x1100, 0x3000)]));
        let image = Bytes(vec![(0x3000, parent), (0x3100, fragment)]);
        let pdata = pdata_x64(&[(0x1000, 0x1100, 0x3000), (0x2000, 0x2040, 0x3100)]);
        let frames = frames(Arch::X64, &pdata, &image).unwrap();
        assert_eq!(frames[1].size, 0x40 + 8 + 8);
        assert_eq!(frames[1].root, 0x1000);
    }

    #[test]
    fn arm64_packed_frame_size_is_read() {
        // Flag 1, FunctionLength 16 words, FrameSize 5 x 16 bytes.
        let data: u32 = 1 | (16 << 2) | (5 << 23);
        let pdata: Vec<u8> = [0x1000u32, data]
            .into_iter()
            .flat_map(u32::to_le_bytes)
            .collect();
        let frames = frames(Arch::Arm64, &pdata, &Bytes(Vec::new())).unwrap();
        assert_eq!((frames[0].end, frames[0].size), (0x1000 + 64, 80));
    }

    #[test]
    fn arm64_an_allocation_only_the_epilog_describes_counts() {
        // Prolog: add_fp, save_fplr_x (16 bytes), end. One epilog (E = 1) at code index 4:
        // alloc_l 0x900 x 16, save_fplr_x 16, end. As LLVM writes a frame-pointer function that
        // probes its stack with __chkstk.
        let header: u32 = 100 | (1 << 21) | (4 << 22) | (3 << 27);
        let mut xdata = header.to_le_bytes().to_vec();
        xdata.extend([
            0xE2, 0x00, 0x81, 0xE4, 0xE0, 0x00, 0x09, 0x00, 0x81, 0xE4, 0xE3, 0xE3,
        ]);
        let image = Bytes(vec![(0x5000, xdata)]);
        let pdata: Vec<u8> = [0x1000u32, 0x5000]
            .into_iter()
            .flat_map(u32::to_le_bytes)
            .collect();
        let frames = frames(Arch::Arm64, &pdata, &image).unwrap();
        assert_eq!(frames[0].size, 0x900 * 16 + 16);
        assert_eq!(frames[0].end, 0x1000 + 400);
    }

    #[test]
    fn unknown_codes_and_cut_short_data_are_errors_not_panics() {
        let image = Bytes(vec![(0x3000, vec![1, 0, 2, 0, 0, 0x0F])]);
        assert!(frames(Arch::X64, &pdata_x64(&[(0x1000, 0x1010, 0x3000)]), &image).is_err());
        assert!(frames(Arch::X64, &pdata_x64(&[(0x1000, 0x1010, 0x9000)]), &image).is_err());
        assert!(arm64_prolog_allocation(&[0xC0]).is_err());
        assert!(arm64_prolog_allocation(&[0xFF]).is_err());
    }
}
