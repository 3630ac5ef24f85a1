// SPDX-License-Identifier: MIT
// The Rust peers of scripts/peers.sh: same arguments, workload and output line
// as benchmarks/peers/peer_bench.cc (docs/peers.md).
//
//   peer-bench-rust --design=NAME --producers=P --capacity=C --size=S --messages=N
//   peer-bench-rust --design=NAME --pingpong --size=S --messages=N
//   peer-bench-rust --list      (the designs this build has, one a line)
//
// crossbeam: crossbeam_channel::bounded(C); flume: flume::bounded(C);
// async-channel: async_channel::bounded(C) through its blocking API
// (send_blocking / recv_blocking). These three are blocking calls on OS
// threads and share one body per mode (`blocking_throughput`,
// `blocking_pingpong`), line for line the C++ runner's. flume and
// async-channel are Cargo features (scripts/peers.sh enables those whose
// Debian crates are installed).
// tokio: tokio::sync::mpsc::channel(C) on a multi-thread runtime with 2
// worker threads; producers and the consumer are tasks (the peer of the
// task table's leanchan-coro and leanchan-asio rows, docs/peers.md).
// CPU time: getrusage(RUSAGE_SELF) user + system, all threads of the
// process, read just outside the timed window (cpu_ns_per_msg).
// Exits 2 on a bad argument, 1 if the checksum is wrong.
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

const DESIGNS: &[&str] = &[
    "crossbeam",
    "tokio",
    #[cfg(feature = "flume")]
    "flume",
    #[cfg(feature = "async-channel")]
    "async-channel",
];

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
        "usage: peer-bench-rust --design=NAME --producers=P --capacity=C --size=S --messages=N\n       \
         peer-bench-rust --design=NAME --pingpong --size=S --messages=N\n       \
         peer-bench-rust --list\n\
         designs: {}\n\
         sizes: 8 24 128 1024; messages a multiple of producers",
        DESIGNS.join(" ")
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
        if arg == "--list" {
            for d in DESIGNS {
                println!("{}", d);
            }
            std::process::exit(0);
        } else if arg == "--pingpong" {
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
    if !DESIGNS.contains(&o.design.as_str()) {
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

// User + system CPU seconds of the whole process (every thread) so far.
fn cpu_seconds() -> f64 {
    // SAFETY: getrusage writes one rusage into the zeroed struct we own.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return 0.0;
    }
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

// What one run measured.
struct Measured {
    seconds: f64,
    cpu_seconds: f64,
    checksum: u64,
}

// The blocking channels on OS threads, behind one shape so that crossbeam,
// flume and async-channel run the very same body (the C++ runner's,
// benchmarks/peers/peer_bench.cc, line for line). Generic, so every call
// is monomorphised and inlined into the body as a direct call would be.
trait Blocking<M: Send + 'static> {
    type Tx: Clone + Send + 'static;
    type Rx: Send + 'static;
    fn make(capacity: usize) -> (Self::Tx, Self::Rx);
    fn send(tx: &Self::Tx, m: M) -> bool;
    fn recv(rx: &Self::Rx) -> Option<M>;
}

// One adapter per channel crate: `$send` and `$recv` are its blocking calls.
macro_rules! blocking_adapter {
    ($(#[$cfg:meta])* $name:ident, $krate:ident, $send:ident, $recv:ident) => {
        $(#[$cfg])*
        struct $name;
        $(#[$cfg])*
        impl<M: Send + 'static> Blocking<M> for $name {
            type Tx = $krate::Sender<M>;
            type Rx = $krate::Receiver<M>;
            #[inline]
            fn make(capacity: usize) -> (Self::Tx, Self::Rx) {
                $krate::bounded(capacity)
            }
            #[inline]
            fn send(tx: &Self::Tx, m: M) -> bool {
                tx.$send(m).is_ok()
            }
            #[inline]
            fn recv(rx: &Self::Rx) -> Option<M> {
                rx.$recv().ok()
            }
        }
    };
}

blocking_adapter!(Crossbeam, crossbeam_channel, send, recv);
blocking_adapter!(#[cfg(feature = "flume")] Flume, flume, send, recv);
blocking_adapter!(#[cfg(feature = "async-channel")] AsyncChannel, async_channel, send_blocking, recv_blocking);

// P producer threads, created before the clock and held at a start gate;
// the main thread is the consumer. Timed: releasing the producers to the
// last receive (peer_bench.cc's throughput()).
fn blocking_throughput<C: Blocking<[u8; S]>, const S: usize>(o: &Options) -> Measured {
    let per = o.messages / o.producers;
    let (tx, rx) = C::make(o.capacity as usize);
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
                if !C::send(&tx, message::<S>(p << 32 | i)) {
                    fail("send failed");
                }
            }
        }));
    }
    drop(tx); // the producers hold the only senders
    while ready.load(Ordering::Acquire) != o.producers {
        std::thread::yield_now();
    }
    let cpu_start = cpu_seconds();
    let start = Instant::now();
    go.store(true, Ordering::Release);
    let mut sum = 0u64;
    for _ in 0..o.messages {
        match C::recv(&rx) {
            Some(m) => sum = sum.wrapping_add(payload(&m)),
            None => fail("channel closed early"),
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu_start;
    for t in threads {
        t.join().unwrap();
    }
    Measured { seconds, cpu_seconds: cpu, checksum: sum }
}

// Round trips: main -> echo thread -> main over two capacity-1 channels;
// the echo thread is running (it has said so) before the clock starts.
fn blocking_pingpong<C: Blocking<[u8; S]>, const S: usize>(o: &Options) -> Measured {
    let (to_echo, echo_in) = C::make(1);
    let (echo_out, from_echo) = C::make(1);
    let n = o.messages;
    let ready = Arc::new(AtomicBool::new(false));
    let echo_ready = ready.clone();
    let echo = std::thread::spawn(move || {
        echo_ready.store(true, Ordering::Release);
        for _ in 0..n {
            match C::recv(&echo_in) {
                Some(m) => {
                    if !C::send(&echo_out, m) {
                        return;
                    }
                }
                None => return,
            }
        }
    });
    while !ready.load(Ordering::Acquire) {
        std::thread::yield_now();
    }
    let mut sum = 0u64;
    let cpu_start = cpu_seconds();
    let start = Instant::now();
    for i in 0..n {
        if !C::send(&to_echo, message::<S>(i)) {
            fail("send failed");
        }
        match C::recv(&from_echo) {
            Some(m) => sum = sum.wrapping_add(payload(&m)),
            None => fail("echo channel closed"),
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu_start;
    echo.join().unwrap();
    Measured { seconds, cpu_seconds: cpu, checksum: sum }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap_or_else(|e| fail(&format!("tokio runtime: {}", e)))
}

fn tokio_throughput<const S: usize>(o: &Options) -> Measured {
    let rt = runtime();
    let (producers, messages, capacity) = (o.producers, o.messages, o.capacity as usize);
    let per = messages / producers;
    rt.block_on(async move {
        let (tx, mut rx) = tokio::sync::mpsc::channel::<[u8; S]>(capacity);
        // The start gate: producers are spawned before the clock starts,
        // count themselves in and wait for a permit; the consumer is spawned
        // once all have started (as every other runner waits for its
        // producers), so no producer's first poll falls inside the window.
        let gate = Arc::new(tokio::sync::Semaphore::new(0));
        let ready = Arc::new(AtomicU64::new(0));
        let mut handles = Vec::new();
        for p in 0..producers {
            let (tx, gate, ready) = (tx.clone(), gate.clone(), ready.clone());
            handles.push(tokio::spawn(async move {
                ready.fetch_add(1, Ordering::AcqRel);
                gate.acquire().await.unwrap().forget();
                for i in 0..per {
                    if tx.send(message::<S>(p << 32 | i)).await.is_err() {
                        fail("send failed");
                    }
                }
            }));
        }
        drop(tx);
        // block_on's thread is not a worker: waiting here holds up no task.
        while ready.load(Ordering::Acquire) != producers {
            std::thread::yield_now();
        }
        let consumer = tokio::spawn(async move {
            let mut sum = 0u64;
            let cpu_start = cpu_seconds();
            let start = Instant::now();
            gate.add_permits(producers as usize);
            for _ in 0..messages {
                match rx.recv().await {
                    Some(m) => sum = sum.wrapping_add(payload(&m)),
                    None => fail("channel closed early"),
                }
            }
            let seconds = start.elapsed().as_secs_f64();
            Measured { seconds, cpu_seconds: cpu_seconds() - cpu_start, checksum: sum }
        });
        let result = consumer.await.unwrap();
        for h in handles {
            h.await.unwrap();
        }
        result
    })
}

fn tokio_pingpong<const S: usize>(o: &Options) -> Measured {
    let rt = runtime();
    let n = o.messages;
    rt.block_on(async move {
        let (to_echo, mut echo_in) = tokio::sync::mpsc::channel::<[u8; S]>(1);
        let (echo_out, mut from_echo) = tokio::sync::mpsc::channel::<[u8; S]>(1);
        // As in the other runners, the echo task has started before the
        // clock does.
        let ready = Arc::new(AtomicBool::new(false));
        let echo_ready = ready.clone();
        let echo = tokio::spawn(async move {
            echo_ready.store(true, Ordering::Release);
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
            while !ready.load(Ordering::Acquire) {
                tokio::task::yield_now().await;
            }
            let mut sum = 0u64;
            let cpu_start = cpu_seconds();
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
            let seconds = start.elapsed().as_secs_f64();
            Measured { seconds, cpu_seconds: cpu_seconds() - cpu_start, checksum: sum }
        });
        let result = pinger.await.unwrap();
        echo.await.unwrap();
        result
    })
}

fn run<const S: usize>(o: &Options) -> Measured {
    match (o.design.as_str(), o.pingpong) {
        ("crossbeam", false) => blocking_throughput::<Crossbeam, S>(o),
        ("crossbeam", true) => blocking_pingpong::<Crossbeam, S>(o),
        #[cfg(feature = "flume")]
        ("flume", false) => blocking_throughput::<Flume, S>(o),
        #[cfg(feature = "flume")]
        ("flume", true) => blocking_pingpong::<Flume, S>(o),
        #[cfg(feature = "async-channel")]
        ("async-channel", false) => blocking_throughput::<AsyncChannel, S>(o),
        #[cfg(feature = "async-channel")]
        ("async-channel", true) => blocking_pingpong::<AsyncChannel, S>(o),
        ("tokio", false) => tokio_throughput::<S>(o),
        ("tokio", true) => tokio_pingpong::<S>(o),
        _ => usage_error(&format!("unknown design '{}'", o.design)),
    }
}

fn main() {
    let o = parse();
    let r = match o.size {
        8 => run::<8>(&o),
        24 => run::<24>(&o),
        128 => run::<128>(&o),
        _ => run::<1024>(&o),
    };
    let seconds = if r.seconds > 0.0 { r.seconds } else { 1e-9 };
    let cpu_ns = r.cpu_seconds * 1e9 / o.messages as f64;
    let checksum = r.checksum;
    let expected = if o.pingpong { expected_checksum(1, o.messages) } else { expected_checksum(o.producers, o.messages / o.producers) };
    if o.pingpong {
        println!(
            "design={} mode=pingpong size={} messages={} seconds={:.6} ns_per_roundtrip={:.1} cpu_seconds={:.6} cpu_ns_per_roundtrip={:.1} checksum={}",
            o.design, o.size, o.messages, seconds, seconds * 1e9 / o.messages as f64, r.cpu_seconds, cpu_ns, checksum
        );
    } else {
        println!(
            "design={} producers={} capacity={} size={} messages={} seconds={:.6} msgs_per_sec={:.0} cpu_seconds={:.6} cpu_ns_per_msg={:.1} checksum={}",
            o.design, o.producers, o.capacity, o.size, o.messages, seconds, o.messages as f64 / seconds, r.cpu_seconds, cpu_ns, checksum
        );
    }
    if checksum != expected {
        eprintln!("peer-bench-rust: checksum mismatch for {}: got {}, expected {}", o.design, checksum, expected);
        std::process::exit(1);
    }
}
