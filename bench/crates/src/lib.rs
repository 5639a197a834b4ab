//! The hot loops of widely used crates.io crates, for the harness's `bench crates` measurement.
//!
//! `bench` builds this package with `RUSTFLAGS=-Coverflow-checks=off`, `on` and `report`, so
//! the mode applies to every crate below and not only to this one, and counts the instructions
//! of `crates-bench <workload>` under callgrind. Each workload is one `#[inline(never)]`
//! function named after it (`adler2()`, `base64_encode()`, ...), so that its code and the crate
//! functions it calls can be found by name in the objects for the code-size measurement.
//!
//! Inputs are generated here and pass through `black_box()` on every round, so that the
//! compiler cannot fold the work away; the glue in this file uses wrapping arithmetic, so that
//! the checks measured are those of the crates. No workload overflows: the three builds must
//! print the same checksums.

#![no_std]

extern crate alloc;

use alloc::vec;
use alloc::vec::Vec;
use core::hash::BuildHasherDefault;
use core::hash::Hasher;
use core::hint::black_box;

use base64::Engine;

/// The workloads, in the order `bench` runs them.
pub const WORKLOADS: &[&str] = &[
    "adler2",
    "atoi",
    "base64-decode",
    "base64-encode",
    "core-sum",
    "crc32fast",
    "fnv",
    "fxhash",
    "hashbrown",
    "itoa",
    "miniz-deflate",
    "miniz-inflate",
    "ryu",
];

/// Runs the workload `name` and returns its checksum, or `None` for an unknown name.
pub fn run(name: &str) -> Option<u64> {
    Some(match name {
        "adler2" => adler2(&bytes(64 * 1024, 1), 200),
        "atoi" => atoi(&decimal_text(16 * 1024, 2), 200),
        "base64-decode" => {
            let text = base64::engine::general_purpose::STANDARD.encode(bytes(48 * 1024, 3));
            base64_decode(text.as_bytes(), 100)
        }
        "base64-encode" => base64_encode(&bytes(48 * 1024, 4), 100),
        "core-sum" => core_sum(&bytes(64 * 1024, 13), 200),
        "crc32fast" => crc32fast(&bytes(64 * 1024, 5), 200),
        "fnv" => fnv(&bytes(64 * 1024, 6), 100),
        "fxhash" => fxhash(&bytes(64 * 1024, 7), 200),
        "hashbrown" => hashbrown(&keys(32 * 1024, 8), 5),
        "itoa" => itoa(&keys(64 * 1024, 9), 3),
        "miniz-deflate" => miniz_deflate(&words(64 * 1024, 10), 2),
        "miniz-inflate" => {
            let compressed = miniz_oxide::deflate::compress_to_vec(&words(256 * 1024, 11), 6);
            miniz_inflate(&compressed, 10)
        }
        "ryu" => ryu(&floats(16 * 1024, 12), 5),
        _ => return None,
    })
}

/// A linear congruential generator, with wrapping arithmetic on purpose.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 16
    }
}

/// `len` pseudo-random bytes.
pub fn bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut rng = Lcg(seed);
    (0..len).map(|_| rng.next() as u8).collect()
}

/// `len` pseudo-random `u64`s of 1 to 20 decimal digits.
pub fn keys(len: usize, seed: u64) -> Vec<u64> {
    let mut rng = Lcg(seed);
    (0..len)
        .map(|_| {
            let x = rng.next() ^ (rng.next() << 32);
            x >> (rng.next() % 64)
        })
        .collect()
}

/// `len` finite `f64`s of every magnitude, both signs, and short decimals.
pub fn floats(len: usize, seed: u64) -> Vec<f64> {
    let mut rng = Lcg(seed);
    (0..len)
        .map(|i| match i % 3 {
            0 => f64::from_bits(rng.next() ^ (rng.next() << 32)).clamp(-1e300, 1e300),
            1 => (rng.next() % 1_000_000) as f64 / 1000.0,
            _ => (rng.next() % 100_000) as f64 * 0.1,
        })
        .map(|f| if f.is_finite() { f } else { 0.5 })
        .collect()
}

/// About `len` bytes of text: a pseudo-random sequence of words, which deflate compresses
/// about 3:1.
pub fn words(len: usize, seed: u64) -> Vec<u8> {
    const WORDS: &str = "the overflow report kernel check wrapped value of a panic and continue \
                         site operand rust integer operation location handler once warn module \
                         to in";
    let words: Vec<&str> = WORDS.split_whitespace().collect();
    let mut rng = Lcg(seed);
    let mut text = Vec::with_capacity(len + 16);
    while text.len() < len {
        text.extend_from_slice(words[(rng.next() % words.len() as u64) as usize].as_bytes());
        text.push(if rng.next().is_multiple_of(16) {
            b'\n'
        } else {
            b' '
        });
    }
    text
}

/// About `len` bytes of decimal numbers, one per line, some negative.
pub fn decimal_text(len: usize, seed: u64) -> Vec<u8> {
    let mut text = Vec::with_capacity(len + 32);
    let mut buffer = itoa::Buffer::new();
    let mut rng = Lcg(seed);
    while text.len() < len {
        let x = (rng.next() >> (rng.next() % 48)) as i64;
        let x = if rng.next().is_multiple_of(4) {
            x.wrapping_neg()
        } else {
            x
        };
        text.extend_from_slice(buffer.format(x).as_bytes());
        text.push(b'\n');
    }
    text
}

/// Adler-32 (`adler2::Adler32::write_slice`), as zlib and PNG use it.
#[inline(never)]
pub fn adler2(data: &[u8], rounds: u32) -> u64 {
    let mut sum = 0u64;
    for _ in 0..rounds {
        let mut adler = adler2::Adler32::new();
        adler.write_slice(black_box(data));
        sum = sum.wrapping_add(adler.checksum() as u64);
    }
    sum
}

/// Decimal integers with `atoi::FromRadix10Signed`, whose loop is `n *= 10; n += digit`.
#[inline(never)]
pub fn atoi(text: &[u8], rounds: u32) -> u64 {
    use atoi::FromRadix10Signed;
    let mut sum = 0u64;
    for _ in 0..rounds {
        let mut rest = black_box(text);
        while !rest.is_empty() {
            let (n, used) = i64::from_radix_10_signed(rest);
            sum = sum.wrapping_add(n as u64);
            rest = &rest[used.max(1)..];
            if let Some((_, tail)) = rest.split_first() {
                rest = tail;
            }
        }
    }
    sum
}

/// Base64 decoding with the standard alphabet (`base64::engine::GeneralPurpose`, no SIMD).
#[inline(never)]
pub fn base64_decode(text: &[u8], rounds: u32) -> u64 {
    let engine = &base64::engine::general_purpose::STANDARD;
    let mut out = vec![0u8; text.len() / 4 * 3];
    let mut sum = 0u64;
    for _ in 0..rounds {
        let n = engine.decode_slice(black_box(text), &mut out).unwrap_or(0);
        sum = sum.wrapping_add(n as u64).wrapping_add(out[n / 2] as u64);
    }
    sum
}

/// Base64 encoding with the standard alphabet and padding.
#[inline(never)]
pub fn base64_encode(data: &[u8], rounds: u32) -> u64 {
    let engine = &base64::engine::general_purpose::STANDARD;
    let mut out = vec![0u8; data.len().div_ceil(3) * 4];
    let mut sum = 0u64;
    for _ in 0..rounds {
        let n = engine.encode_slice(black_box(data), &mut out).unwrap_or(0);
        sum = sum.wrapping_add(n as u64).wrapping_add(out[n / 2] as u64);
    }
    sum
}

/// The sum of a byte slice with the standard library's `Iterator::sum` (`core`'s `Sum for u32`,
/// whose `+` takes the overflow checks of the crate that instantiates it), in a function that is
/// given the slice, as code that sums bytes is written.
#[inline(never)]
pub fn core_sum(data: &[u8], rounds: u32) -> u64 {
    let mut sum = 0u64;
    for _ in 0..rounds {
        sum = sum.wrapping_add(sum_bytes(black_box(data)) as u64);
    }
    sum
}

/// `core_sum`'s sum. Its own function, because `black_box(data)` returns a pointer that LLVM
/// must assume any call may write through, and a loop whose data a report call may write keeps
/// its reports in place.
#[inline(never)]
fn sum_bytes(data: &[u8]) -> u32 {
    data.iter().map(|&b| u32::from(b)).sum()
}

/// CRC-32 with crc32fast's table-driven path (slice-by-16), forced with
/// `Hasher::internal_new_baseline` so that neither PCLMULQDQ nor the Arm CRC instructions are
/// used, whatever the CPU.
#[inline(never)]
pub fn crc32fast(data: &[u8], rounds: u32) -> u64 {
    let mut sum = 0u64;
    for _ in 0..rounds {
        let mut hasher = crc32fast::Hasher::internal_new_baseline(0, 0);
        hasher.update(black_box(data));
        sum = sum.wrapping_add(hasher.finalize() as u64);
    }
    sum
}

/// FNV-1a (`fnv::FnvHasher`) over keys of 1 to 32 bytes cut from `data`.
#[inline(never)]
pub fn fnv(data: &[u8], rounds: u32) -> u64 {
    hash_keys::<fnv::FnvHasher>(data, rounds)
}

/// FxHash (`rustc_hash::FxHasher`, rustc's hasher) over keys of 1 to 32 bytes cut from `data`.
#[inline(never)]
pub fn fxhash(data: &[u8], rounds: u32) -> u64 {
    hash_keys::<rustc_hash::FxHasher>(data, rounds)
}

/// Hashes `data` cut into keys of 1 to 32 bytes, one hasher per key, as a hash map does.
fn hash_keys<H: Hasher + Default>(data: &[u8], rounds: u32) -> u64 {
    let mut sum = 0u64;
    for _ in 0..rounds {
        let mut rest = black_box(data);
        while !rest.is_empty() {
            let len = (rest[0] as usize % 32 + 1).min(rest.len());
            let (key, tail) = rest.split_at(len);
            let mut hasher = H::default();
            hasher.write(key);
            hasher.write_usize(len);
            sum = sum.wrapping_add(hasher.finish());
            rest = tail;
        }
    }
    sum
}

/// `hashbrown::HashMap<u64, u64>` with FxHash (deterministic, unlike the default hasher's
/// random seed): inserts every key into a map that grows from empty, then looks up every key
/// and as many absent ones, and removes half.
#[inline(never)]
pub fn hashbrown(keys: &[u64], rounds: u32) -> u64 {
    type Map = hashbrown::HashMap<u64, u64, BuildHasherDefault<rustc_hash::FxHasher>>;
    let mut sum = 0u64;
    for _ in 0..rounds {
        let keys = black_box(keys);
        let mut map = Map::default();
        for (i, &k) in keys.iter().enumerate() {
            *map.entry(k).or_insert(0) ^= i as u64;
        }
        for &k in keys {
            sum = sum.wrapping_add(map.get(&k).copied().unwrap_or(1));
            sum = sum.wrapping_add(map.get(&!k).copied().unwrap_or(1));
        }
        for &k in keys.iter().step_by(2) {
            sum = sum.wrapping_add(map.remove(&k).unwrap_or(3));
        }
        sum = sum.wrapping_add(map.len() as u64);
    }
    sum
}

/// Integer to decimal (`itoa::Buffer::format`) for `u64`, `i64` and `u32`.
#[inline(never)]
pub fn itoa(values: &[u64], rounds: u32) -> u64 {
    let mut buffer = itoa::Buffer::new();
    let mut sum = 0u64;
    for _ in 0..rounds {
        for &v in black_box(values) {
            let a = buffer.format(v).len();
            let b = buffer.format(v as i64).as_bytes()[0];
            let c = buffer.format(v as u32).len();
            sum = sum
                .wrapping_add(a as u64)
                .wrapping_add(b as u64)
                .wrapping_add(c as u64);
        }
    }
    sum
}

/// Deflate at level 6 (`miniz_oxide::deflate::compress_to_vec`, zlib's default level).
#[inline(never)]
pub fn miniz_deflate(data: &[u8], rounds: u32) -> u64 {
    let mut sum = 0u64;
    for _ in 0..rounds {
        let out = miniz_oxide::deflate::compress_to_vec(black_box(data), 6);
        sum = sum
            .wrapping_add(out.len() as u64)
            .wrapping_add(out[out.len() / 2] as u64);
    }
    sum
}

/// Inflate (`miniz_oxide::inflate::decompress_to_vec`) of deflated text.
#[inline(never)]
pub fn miniz_inflate(compressed: &[u8], rounds: u32) -> u64 {
    let mut sum = 0u64;
    for _ in 0..rounds {
        let out =
            miniz_oxide::inflate::decompress_to_vec(black_box(compressed)).unwrap_or_default();
        sum = sum
            .wrapping_add(out.len() as u64)
            .wrapping_add(out[out.len() / 2] as u64);
    }
    sum
}

/// Shortest round-trip decimal of `f64` (`ryu::Buffer::format_finite`).
#[inline(never)]
pub fn ryu(values: &[f64], rounds: u32) -> u64 {
    let mut buffer = ryu::Buffer::new();
    let mut sum = 0u64;
    for _ in 0..rounds {
        for &v in black_box(values) {
            let s = buffer.format_finite(v);
            sum = sum
                .wrapping_add(s.len() as u64)
                .wrapping_add(s.as_bytes()[1] as u64);
        }
    }
    sum
}
