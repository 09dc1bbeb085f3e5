//! Classic libpcap capture files: the format Wireshark, tshark and tcpdump all read
//! (`pcap-savefile(5)`): a 24-byte file header (magic, version 2.4, snap length, link type),
//! then per frame a 16-byte record header (seconds, microseconds, captured and original length)
//! and the frame's bytes. Written little-endian with microsecond timestamps.
//!
//! By hand rather than with the pcap-file crate DESIGN.md §7 names: the writer is the two
//! headers above, the reader (for the tests that check what was written and for the public
//! captures of `tests/data`) is their inverse, and the crate would bring its own dependencies
//! for that.

use std::io::{self, Write};

/// The magic number of a microsecond-resolution file, as written in the file's byte order.
pub const MAGIC_MICROSECONDS: u32 = 0xA1B2_C3D4;
/// The magic number of a nanosecond-resolution file (read, not written).
pub const MAGIC_NANOSECONDS: u32 = 0xA1B2_3C4D;
/// `LINKTYPE_ETHERNET`: each record is an Ethernet frame from its destination address on,
/// without preamble or FCS.
pub const LINKTYPE_ETHERNET: u32 = 1;
/// The snap length written in the header: every Ethernet frame fits whole (the longest the
/// driver puts on its wire is 9022 bytes, at `*JumboPacket` 9014), so no record is cut.
pub const SNAPLEN: u32 = 65_535;

/// Writes a capture file to `out`: the file header at once, then one record per [`Writer::write`].
pub struct Writer<W: Write> {
    out: W,
}

impl<W: Write> Writer<W> {
    /// Writes the file header (version 2.4, zone 0, [`SNAPLEN`], [`LINKTYPE_ETHERNET`]).
    ///
    /// # Errors
    /// The output's error.
    pub fn new(mut out: W) -> io::Result<Self> {
        let mut header = [0u8; 24];
        header[..4].copy_from_slice(&MAGIC_MICROSECONDS.to_le_bytes());
        header[4..6].copy_from_slice(&2u16.to_le_bytes());
        header[6..8].copy_from_slice(&4u16.to_le_bytes());
        // thiszone and sigfigs (8..16) stay 0: timestamps are UTC.
        header[16..20].copy_from_slice(&SNAPLEN.to_le_bytes());
        header[20..24].copy_from_slice(&LINKTYPE_ETHERNET.to_le_bytes());
        out.write_all(&header)?;
        Ok(Self { out })
    }

    /// Writes one frame seen `at_us` microseconds after the Unix epoch (cut to [`SNAPLEN`]
    /// bytes, its original length kept).
    ///
    /// # Errors
    /// `InvalidInput` for a time past 2106 (the header's seconds are 32 bits) or a frame longer
    /// than 4 GiB; otherwise the output's error.
    pub fn write(&mut self, at_us: u64, frame: &[u8]) -> io::Result<()> {
        let invalid = |what: &str| io::Error::new(io::ErrorKind::InvalidInput, what.to_string());
        let seconds =
            u32::try_from(at_us / 1_000_000).map_err(|_| invalid("a timestamp past 2106"))?;
        let micros = (at_us % 1_000_000) as u32;
        let original = u32::try_from(frame.len()).map_err(|_| invalid("a frame over 4 GiB"))?;
        let kept = original.min(SNAPLEN);
        let mut header = [0u8; 16];
        header[..4].copy_from_slice(&seconds.to_le_bytes());
        header[4..8].copy_from_slice(&micros.to_le_bytes());
        header[8..12].copy_from_slice(&kept.to_le_bytes());
        header[12..16].copy_from_slice(&original.to_le_bytes());
        self.out.write_all(&header)?;
        self.out.write_all(&frame[..kept as usize])
    }

    /// Flushes the output.
    ///
    /// # Errors
    /// The output's error.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// The output, after the last record.
    pub fn into_inner(self) -> W {
        self.out
    }
}

/// The records of `frames` in a file whose first frame is at `first_us`, one second apart.
///
/// # Panics
/// Never for frames under 4 GiB and times before 2106 (writing to memory cannot fail).
#[must_use]
pub fn file_of(first_us: u64, frames: &[Vec<u8>]) -> Vec<u8> {
    let mut w = Writer::new(Vec::new()).expect("writing to memory");
    for (i, f) in (0u64..).zip(frames) {
        w.write(first_us + i * 1_000_000, f)
            .expect("a frame under 4 GiB, before 2106");
    }
    w.into_inner()
}

/// One record of a capture file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// When, in nanoseconds after the Unix epoch.
    pub at_ns: u64,
    /// The frame's length on the wire.
    pub original_len: u32,
    /// The bytes captured.
    pub data: Vec<u8>,
}

/// A capture file read whole: its link type and records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct File {
    /// The header's link type (`LINKTYPE_ETHERNET` = 1).
    pub linktype: u32,
    /// The header's snap length.
    pub snaplen: u32,
    /// The records, in file order.
    pub records: Vec<Record>,
}

/// Reads a classic pcap file of either byte order and either resolution.
///
/// # Errors
/// What is wrong with it: an unknown magic number, a short header, a record past the end, a
/// record longer than the snap length.
pub fn read(bytes: &[u8]) -> Result<File, String> {
    let field = |at: usize, big: bool| -> Result<u32, String> {
        let b: [u8; 4] = bytes
            .get(at..at + 4)
            .and_then(|b| b.try_into().ok())
            .ok_or_else(|| format!("the file ends inside the field at byte {at}"))?;
        Ok(if big {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        })
    };
    let (big, ns_per_unit) = match field(0, false)? {
        MAGIC_MICROSECONDS => (false, 1_000),
        MAGIC_NANOSECONDS => (false, 1),
        m if m == MAGIC_MICROSECONDS.swap_bytes() => (true, 1_000),
        m if m == MAGIC_NANOSECONDS.swap_bytes() => (true, 1),
        m => return Err(format!("not a classic pcap file (magic {m:#010x})")),
    };
    let snaplen = field(16, big)?;
    let linktype = field(20, big)?;
    let mut records = Vec::new();
    let mut at = 24;
    while at < bytes.len() {
        let seconds = u64::from(field(at, big)?);
        let fraction = u64::from(field(at + 4, big)?);
        let kept = field(at + 8, big)?;
        let original_len = field(at + 12, big)?;
        if kept > snaplen {
            return Err(format!(
                "record {} keeps {kept} bytes, over the snap length {snaplen}",
                records.len() + 1
            ));
        }
        let start = at + 16;
        let data = bytes
            .get(start..start + kept as usize)
            .ok_or_else(|| format!("record {} runs past the end", records.len() + 1))?
            .to_vec();
        records.push(Record {
            at_ns: seconds * 1_000_000_000 + fraction * ns_per_unit,
            original_len,
            data,
        });
        at = start + kept as usize;
    }
    Ok(File {
        linktype,
        snaplen,
        records,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_read_back_as_written_with_the_header_tools_expect() {
        let frames = [vec![0xAA; 60], vec![0x55; 1518], Vec::new()];
        let mut w = Writer::new(Vec::new()).unwrap();
        let times = [
            1_767_225_600_000_000u64,
            1_767_225_600_000_999,
            1_767_225_601_500_000,
        ];
        for (t, f) in times.iter().zip(&frames) {
            w.write(*t, f).unwrap();
        }
        let bytes = w.into_inner();
        // The header as pcap-savefile(5) lays it out, little-endian.
        assert_eq!(
            &bytes[..24],
            &[
                0xD4, 0xC3, 0xB2, 0xA1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0, 0, 1, 0,
                0, 0
            ]
        );
        // The second record's header: seconds, microseconds 999, 1518 kept of 1518.
        let second = 24 + 16 + 60;
        assert_eq!(
            &bytes[second..second + 16],
            &[
                0x00, 0xB9, 0x55, 0x69, 0xE7, 0x03, 0, 0, 0xEE, 0x05, 0, 0, 0xEE, 0x05, 0, 0
            ]
        );
        assert_eq!(bytes.len(), 24 + 3 * 16 + 60 + 1518);
        let file = read(&bytes).unwrap();
        assert_eq!((file.linktype, file.snaplen), (1, 65_535));
        let back: Vec<_> = file
            .records
            .iter()
            .map(|r| (r.at_ns / 1_000, r.original_len as usize, r.data.clone()))
            .collect();
        let meant: Vec<_> = times
            .iter()
            .zip(&frames)
            .map(|(t, f)| (*t, f.len(), f.clone()))
            .collect();
        assert_eq!(back, meant);
    }

    #[test]
    fn a_frame_over_the_snap_length_is_cut_and_keeps_its_length() {
        let mut w = Writer::new(Vec::new()).unwrap();
        w.write(0, &vec![7u8; SNAPLEN as usize + 10]).unwrap();
        let file = read(&w.into_inner()).unwrap();
        assert_eq!(file.records[0].data.len(), SNAPLEN as usize);
        assert_eq!(file.records[0].original_len, SNAPLEN + 10);
    }

    #[test]
    fn times_past_2106_are_refused_not_wrapped() {
        let mut w = Writer::new(Vec::new()).unwrap();
        let e = w.write(u64::from(u32::MAX) * 1_000_000 + 1_000_000, &[0; 60]);
        assert_eq!(e.unwrap_err().kind(), io::ErrorKind::InvalidInput);
    }

    #[test]
    fn damaged_files_are_named_not_misread() {
        let good = file_of(0, &[vec![1; 60]]);
        assert!(
            read(&good[..good.len() - 1])
                .unwrap_err()
                .contains("past the end")
        );
        assert!(read(&good[..30]).unwrap_err().contains("ends inside"));
        assert!(read(&[0; 24]).unwrap_err().contains("magic"));
        // Big-endian nanosecond files (another writer's choice) read too.
        let mut be = good.clone();
        be[..4].copy_from_slice(&MAGIC_NANOSECONDS.to_be_bytes());
        for at in [16, 20, 24, 28, 32, 36] {
            be[at..at + 4].reverse();
        }
        let file = read(&be).unwrap();
        assert_eq!(file.records[0].data, vec![1; 60]);
    }
}
