// SPDX-License-Identifier: MIT
// The Rust peers of scripts/peers.sh: same arguments, workload and output line
// as benchmarks/peers/peer_bench.cc (docs/peers.md).
//
//   peer-bench-rust --design=crossbeam|tokio --producers=P --capacity=C --size=S --messages=N
//   peer-bench-rust --design=crossbeam|tokio --pingpong --size=S --messages=N
//
// crossbeam: crossbeam_channel::bounded(C), blocking send/recv on OS threads.
// tokio: tokio::sync::mpsc::channel(C) on a multi-thread runtime with 2
// worker threads; producers and the consumer are tasks.
// Exits 2 on a bad argument, 1 if the checksum is wrong.
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

struct Options {
    design: String,
    producers: u64,
    capacity: u64,
    size: u64,
    messages: u64,
    pingpong: bool,
}

fn usage_error(what: &str) -> ! {
    eprintln!("peer-bench-rust: {}", what);
    eprintln!(
        "usage: peer-bench-rust --design=crossbeam|tokio --producers=P --capacity=C --size=S --messages=N\n       \
         peer-bench-rust --design=crossbeam|tokio --pingpong --size=S --messages=N\n\
         sizes: 8 24 128 1024; messages a multiple of producers"
    );
    std::process::exit(2);
}

fn parse_count(name: &str, text: &str) -> u64 {
    if text.is_empty() || text.len() > 18 || !text.bytes().all(|b| b.is_ascii_digit()) {
        usage_error(&format!("bad value for --{}: '{}'", name, text));
    }
    text.parse().unwrap_or_else(|_| usage_error(&format!("bad value for --{}", name)))
}

fn parse() -> Options {
    let mut o = Options { design: String::new(), producers: 1, capacity: 0, size: 0, messages: 0, pingpong: false };
    let (mut have_producers, mut have_capacity) = (false, false);
    for arg in std::env::args().skip(1) {
        if arg == "--pingpong" {
            o.pingpong = true;
        } else if let Some(v) = arg.strip_prefix("--design=") {
            o.design = v.to_string();
        } else if let Some(v) = arg.strip_prefix("--producers=") {
            o.producers = parse_count("producers", v);
            have_producers = true;
        } else if let Some(v) = arg.strip_prefix("--capacity=") {
            o.capacity = parse_count("capacity", v);
            have_capacity = true;
        } else if let Some(v) = arg.strip_prefix("--size=") {
            o.size = parse_count("size", v);
        } else if let Some(v) = arg.strip_prefix("--messages=") {
            o.messages = parse_count("messages", v);
        } else {
            usage_error(&format!("unknown argument '{}'", arg));
        }
    }
    if o.design.is_empty() {
        usage_error("--design is required");
    }
    if o.design != "crossbeam" && o.design != "tokio" {
        usage_error(&format!("unknown design '{}'", o.design));
    }
    if ![8, 24, 128, 1024].contains(&o.size) {
        usage_error("--size must be 8, 24, 128 or 1024");
    }
    if o.messages == 0 {
        usage_error("--messages must be at least 1");
    }
    if o.pingpong {
        if (have_producers && o.producers != 1) || (have_capacity && o.capacity != 1) {
            usage_error("--pingpong uses one producer and capacity 1");
        }
        o.producers = 1;
        o.capacity = 1;
        return o;
    }
    if !have_capacity {
        usage_error("--capacity is required");
    }
    if o.producers < 1 || o.producers > 1024 {
        usage_error("--producers must be 1 to 1024");
    }
    if o.capacity < 1 || o.capacity > (1 << 30) {
        usage_error("--capacity must be 1 to 2^30");
    }
    if o.messages % o.producers != 0 {
        usage_error("--messages must be a multiple of --producers");
    }
    if o.messages / o.producers >= (1 << 32) {
        usage_error("--messages / --producers must be below 2^32");
    }
    o
}

// Sum (mod 2^64) of p << 32 | i over producers p and messages i < m of each.
fn expected_checksum(producers: u64, m: u64) -> u64 {
    let pairs_p = if producers % 2 == 0 { (producers / 2).wrapping_mul(producers - 1) } else { producers.wrapping_mul((producers - 1) / 2) };
    let pairs_m = if m % 2 == 0 { (m / 2).wrapping_mul(m - 1) } else { m.wrapping_mul((m - 1) / 2) };
    (pairs_p.wrapping_mul(m) << 32).wrapping_add(producers.wrapping_mul(pairs_m))
}

fn message<const S: usize>(payload: u64) -> [u8; S] {
    let mut m = [0u8; S];
    m[..8].copy_from_slice(&payload.to_le_bytes());
    m
}

fn payload<const S: usize>(m: &[u8; S]) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&m[..8]);
    u64::from_le_bytes(b)
}

fn fail(what: &str) -> ! {
    eprintln!("peer-bench-rust: {}", what);
    std::process::exit(1);
}

// Returns (seconds, checksum).
fn crossbeam_throughput<const S: usize>(o: &Options) -> (f64, u64) {
    let per = o.messages / o.producers;
    let (tx, rx) = crossbeam_channel::bounded::<[u8; S]>(o.capacity as usize);
    let ready = Arc::new(AtomicU64::new(0));
    let go = Arc::new(AtomicBool::new(false));
    let mut threads = Vec::new();
    for p in 0..o.producers {
        let (tx, ready, go) = (tx.clone(), ready.clone(), go.clone());
        threads.push(std::thread::spawn(move || {
            ready.fetch_add(1, Ordering::AcqRel);
            while !go.load(Ordering::Acquire) {
                std::thread::yield_now();
            }
            for i in 0..per {
                if tx.send(message::<S>(p << 32 | i)).is_err() {
                    fail("send failed");
                }
            }
        }));
    }
    drop(tx);
    while ready.load(Ordering::Acquire) != o.producers {
        std::thread::yield_now();
    }
    let start = Instant::now();
    go.store(true, Ordering::Release);
    let mut sum = 0u64;
    for _ in 0..o.messages {
        match rx.recv() {
            Ok(m) => sum = sum.wrapping_add(payload(&m)),
            Err(_) => fail("channel closed early"),
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    for t in threads {
        t.join().unwrap();
    }
    (seconds, sum)
}

fn crossbeam_pingpong<const S: usize>(o: &Options) -> (f64, u64) {
    let (to_echo, echo_in) = crossbeam_channel::bounded::<[u8; S]>(1);
    let (echo_out, from_echo) = crossbeam_channel::bounded::<[u8; S]>(1);
    let n = o.messages;
    let echo = std::thread::spawn(move || {
        for _ in 0..n {
            match echo_in.recv() {
                Ok(m) => {
                    if echo_out.send(m).is_err() {
                        return;
                    }
                }
                Err(_) => return,
            }
        }
    });
    let mut sum = 0u64;
    let start = Instant::now();
    for i in 0..n {
        to_echo.send(message::<S>(i)).unwrap_or_else(|_| fail("send failed"));
        match from_echo.recv() {
            Ok(m) => sum = sum.wrapping_add(payload(&m)),
            Err(_) => fail("echo channel closed"),
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    echo.join().unwrap();
    (seconds, sum)
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap_or_else(|e| fail(&format!("tokio runtime: {}", e)))
}

fn tokio_throughput<const S: usize>(o: &Options) -> (f64, u64) {
    let rt = runtime();
    let (producers, messages, capacity) = (o.producers, o.messages, o.capacity as usize);
    let per = messages / producers;
    rt.block_on(async move {
        let (tx, mut rx) = tokio::sync::mpsc::channel::<[u8; S]>(capacity);
        // The start gate: producers are spawned before the clock starts and
        // wait for a permit.
        let gate = Arc::new(tokio::sync::Semaphore::new(0));
        let mut handles = Vec::new();
        for p in 0..producers {
            let (tx, gate) = (tx.clone(), gate.clone());
            handles.push(tokio::spawn(async move {
                gate.acquire().await.unwrap().forget();
                for i in 0..per {
                    if tx.send(message::<S>(p << 32 | i)).await.is_err() {
                        fail("send failed");
                    }
                }
            }));
        }
        drop(tx);
        let consumer = tokio::spawn(async move {
            let mut sum = 0u64;
            let start = Instant::now();
            gate.add_permits(producers as usize);
            for _ in 0..messages {
                match rx.recv().await {
                    Some(m) => sum = sum.wrapping_add(payload(&m)),
                    None => fail("channel closed early"),
                }
            }
            (start.elapsed().as_secs_f64(), sum)
        });
        let result = consumer.await.unwrap();
        for h in handles {
            h.await.unwrap();
        }
        result
    })
}

fn tokio_pingpong<const S: usize>(o: &Options) -> (f64, u64) {
    let rt = runtime();
    let n = o.messages;
    rt.block_on(async move {
        let (to_echo, mut echo_in) = tokio::sync::mpsc::channel::<[u8; S]>(1);
        let (echo_out, mut from_echo) = tokio::sync::mpsc::channel::<[u8; S]>(1);
        let echo = tokio::spawn(async move {
            for _ in 0..n {
                match echo_in.recv().await {
                    Some(m) => {
                        if echo_out.send(m).await.is_err() {
                            return;
                        }
                    }
                    None => return,
                }
            }
        });
        let pinger = tokio::spawn(async move {
            let mut sum = 0u64;
            let start = Instant::now();
            for i in 0..n {
                if to_echo.send(message::<S>(i)).await.is_err() {
                    fail("send failed");
                }
                match from_echo.recv().await {
                    Some(m) => sum = sum.wrapping_add(payload(&m)),
                    None => fail("echo channel closed"),
                }
            }
            (start.elapsed().as_secs_f64(), sum)
        });
        let result = pinger.await.unwrap();
        echo.await.unwrap();
        result
    })
}

fn run<const S: usize>(o: &Options) -> (f64, u64) {
    match (o.design.as_str(), o.pingpong) {
        ("crossbeam", false) => crossbeam_throughput::<S>(o),
        ("crossbeam", true) => crossbeam_pingpong::<S>(o),
        ("tokio", false) => tokio_throughput::<S>(o),
        _ => tokio_pingpong::<S>(o),
    }
}

fn main() {
    let o = parse();
    let (seconds, checksum) = match o.size {
        8 => run::<8>(&o),
        24 => run::<24>(&o),
        128 => run::<128>(&o),
        _ => run::<1024>(&o),
    };
    let seconds = if seconds > 0.0 { seconds } else { 1e-9 };
    let expected = if o.pingpong { expected_checksum(1, o.messages) } else { expected_checksum(o.producers, o.messages / o.producers) };
    if o.pingpong {
        println!(
            "design={} mode=pingpong size={} messages={} seconds={:.6} ns_per_roundtrip={:.1} checksum={}",
            o.design, o.size, o.messages, seconds, seconds * 1e9 / o.messages as f64, checksum
        );
    } else {
        println!(
            "design={} producers={} capacity={} size={} messages={} seconds={:.6} msgs_per_sec={:.0} checksum={}",
            o.design, o.producers, o.capacity, o.size, o.messages, seconds, o.messages as f64 / seconds, checksum
        );
    }
    if checksum != expected {
        eprintln!("peer-bench-rust: checksum mismatch for {}: got {}, expected {}", o.design, checksum, expected);
        std::process::exit(1);
    }
}
