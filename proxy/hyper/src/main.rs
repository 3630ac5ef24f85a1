// SPDX-License-Identifier: MIT
//! leanchan-proxy-hyper: the hyper 0.14 / Tokio 1.24 anchor of the proxy
//! comparison. Same command line, requests and admin protocol as the C++
//! leanchan-proxy (docs/proxy.md, "The contract"); the parts line up as
//! follows:
//! - a client connection is served by hyper's http1 server; its reading
//!   side hands each parsed request (a fixed-size `Job`, the target inline)
//!   to a per-connection forwarder task over a `tokio::sync::mpsc` channel
//!   of capacity 2, and awaits the response on a oneshot: the shape of
//!   hyper's own client dispatch (`SendRequest`).
//! - the forwarder sends the request over hyper's pooled keep-alive
//!   `Client` to an endpoint of the service that is up.
//! - each service has a `tokio::sync::mpsc` health channel of capacity 16
//!   and one drain task; a TCP-connect checker per distinct endpoint and
//!   `POST /admin/flap` feed it.
//! - a counting global allocator gives `heap_requested_bytes` and the
//!   start-up `heap_per_service`.
//! - `ClientStream`, around each accepted socket, enforces the header and
//!   idle timeouts.

use std::alloc::{GlobalAlloc, Layout, System};
use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicI64, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use hyper::body::HttpBody;
use hyper::client::HttpConnector;
use hyper::header::{HeaderValue, CONNECTION, CONTENT_TYPE};
use hyper::http::uri::Authority;
use hyper::server::accept::Accept;
use hyper::server::conn::{AddrIncoming, AddrStream};
use hyper::service::{make_service_fn, service_fn};
use hyper::{Body, Client, Method, Request, Response, Server, StatusCode, Uri, Version};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::{mpsc, oneshot, Notify};
use tokio::time::{Instant, Sleep};

// ---------------------------------------------------------------- allocator

/// Live bytes requested from the heap (sizes asked for, not what the
/// system allocator rounds them up to), over the whole process.
static LIVE_REQUESTED: AtomicI64 = AtomicI64::new(0);

/// The system allocator, counting requested bytes in `LIVE_REQUESTED`.
struct CountingAlloc;

unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            LIVE_REQUESTED.fetch_add(layout.size() as i64, Ordering::Relaxed);
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        if !p.is_null() {
            LIVE_REQUESTED.fetch_add(layout.size() as i64, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        LIVE_REQUESTED.fetch_sub(layout.size() as i64, Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        if !p.is_null() {
            LIVE_REQUESTED.fetch_add(new_size as i64 - layout.size() as i64, Ordering::Relaxed);
        }
        p
    }
}

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

fn heap_requested() -> i64 {
    LIVE_REQUESTED.load(Ordering::Relaxed)
}

// ---------------------------------------------------------------- flags

const USAGE: &str = "\
usage: leanchan-proxy-hyper --backends=HOST:PORT[,HOST:PORT...] [flags]

The hyper/Tokio anchor of leanchan-proxy (docs/proxy.md): the same flags,
requests and admin protocol.

  --listen=ADDR:PORT          listen address (127.0.0.1:0; port 0 picks one)
  --backends=A:P,A:P          the endpoints; endpoint j of every service is backend j
  --services=S                services /svc/0 .. /svc/S-1 (10000)
  --channel=hyper             accepted for the C++ proxy's flag; only 'hyper'
  --threads=N                 Tokio worker threads (available parallelism)
  --probe-interval-ms=MS      TCP-connect health probe per endpoint (1000; 0: none)
  --upstream-timeout-ms=MS    upstream connect + response, then 502 (2000)
  --header-timeout-ms=MS      whole request head within MS or closed (5000)
  --idle-timeout-ms=MS        close client connections idle MS (0: never)
  --help                      this text

Prints `ready port=P` when listening. SIGTERM/SIGINT: graceful stop, exit 0.
";

struct Config {
    listen: SocketAddr,
    backends: Vec<SocketAddr>,
    services: usize,
    threads: usize,
    probe_interval: Duration,
    upstream_timeout: Duration,
    header_timeout: Duration,
    idle_timeout: Duration,
}

fn parse_u64(flag: &str, v: &str, min: u64) -> Result<u64, String> {
    match v.parse::<u64>() {
        Ok(n) if n >= min => Ok(n),
        _ => Err(format!("--{flag}: '{v}' is not a whole number >= {min}")),
    }
}

/// Ok(None): --help was asked for.
fn parse_args(args: &[String]) -> Result<Option<Config>, String> {
    let mut cfg = Config {
        listen: "127.0.0.1:0".parse().unwrap(),
        backends: Vec::new(),
        services: 10000,
        threads: std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1),
        probe_interval: Duration::from_millis(1000),
        upstream_timeout: Duration::from_millis(2000),
        header_timeout: Duration::from_millis(5000),
        idle_timeout: Duration::ZERO,
    };
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        if arg == "--help" || arg == "-h" {
            return Ok(None);
        }
        let body = match arg.strip_prefix("--") {
            Some(body) => body,
            None => return Err(format!("unexpected argument '{arg}'")),
        };
        let (flag, value) = match body.split_once('=') {
            Some((f, v)) => (f, v.to_string()),
            None => {
                if i >= args.len() {
                    return Err(format!("--{body}: missing value"));
                }
                i += 1;
                (body, args[i - 1].clone())
            }
        };
        let ms = |min| parse_u64(flag, &value, min).map(Duration::from_millis);
        match flag {
            "listen" => {
                cfg.listen = value
                    .parse()
                    .map_err(|_| format!("--listen: '{value}' is not ADDR:PORT"))?
            }
            "backends" => {
                cfg.backends.clear();
                for part in value.split(',') {
                    let addr: SocketAddr = part
                        .parse()
                        .map_err(|_| format!("--backends: '{part}' is not ADDR:PORT"))?;
                    cfg.backends.push(addr);
                }
                if cfg.backends.len() > usize::from(u16::MAX) {
                    return Err("--backends: too many endpoints".to_string());
                }
            }
            "services" => {
                let n = parse_u64(flag, &value, 1)?;
                cfg.services = usize::try_from(n)
                    .ok()
                    .filter(|&n| n <= u32::MAX as usize)
                    .ok_or_else(|| format!("--services: '{value}' is too large"))?;
            }
            "channel" => {
                if value != "hyper" {
                    return Err(format!(
                        "--channel: '{value}' is not supported (only 'hyper')"
                    ));
                }
            }
            "threads" => {
                let n = parse_u64(flag, &value, 1)?;
                cfg.threads = usize::try_from(n)
                    .ok()
                    .filter(|&n| n <= 4096)
                    .ok_or_else(|| format!("--threads: '{value}' is too large"))?;
            }
            "probe-interval-ms" => cfg.probe_interval = ms(0)?,
            "upstream-timeout-ms" => cfg.upstream_timeout = ms(1)?,
            "header-timeout-ms" => cfg.header_timeout = ms(1)?,
            "idle-timeout-ms" => cfg.idle_timeout = ms(0)?,
            _ => return Err(format!("unknown flag --{flag}")),
        }
    }
    if cfg.backends.is_empty() {
        return Err("--backends: at least one endpoint is required".to_string());
    }
    Ok(Some(cfg))
}

// ---------------------------------------------------------------- services

/// One health event (24 bytes, as the C++ proxy's): endpoint `endpoint` of
/// the receiving service is now up or down with `weight`; `flap` is set
/// when it came from `POST /admin/flap`, which waits for every one of its
/// events.
struct HealthEvent {
    flap: Option<Arc<Flap>>,
    endpoint: u32,
    weight: u32,
    up: bool,
}
const _: () = assert!(std::mem::size_of::<HealthEvent>() == 24);

/// One `POST /admin/flap`: its events not yet applied, and the wake-up of
/// its handler once none is left.
struct Flap {
    remaining: AtomicUsize,
    done: Notify,
}

/// A service: its health channel's sending side, and per endpoint
/// `weight << 1 | up`, written only by the service's drain task.
struct Service {
    health: mpsc::Sender<HealthEvent>,
    endpoints: Box<[AtomicU32]>,
    next: AtomicU32,
}

const HEALTH_CAPACITY: usize = 16;
const DISPATCH_CAPACITY: usize = 2;

impl Service {
    /// The endpoint for the next request: round-robin over the up
    /// endpoints, each taking `weight` turns in a row; None if none is up.
    fn pick(&self) -> Option<usize> {
        let total: u64 = self
            .endpoints
            .iter()
            .map(|e| e.load(Ordering::Acquire))
            .filter(|v| v & 1 == 1)
            .map(|v| u64::from(v >> 1))
            .sum();
        if total == 0 {
            return None;
        }
        let mut turn = u64::from(self.next.fetch_add(1, Ordering::Relaxed)) % total;
        let mut last_up = None;
        for (j, e) in self.endpoints.iter().enumerate() {
            let v = e.load(Ordering::Acquire);
            if v & 1 == 0 {
                continue;
            }
            last_up = Some(j);
            let w = u64::from(v >> 1);
            if turn < w {
                return Some(j);
            }
            turn -= w;
        }
        // A drain changed the weights between the two passes.
        last_up
    }
}

/// Applies the health events of one service, in order, on the runtime's
/// worker threads.
async fn drain(service: &'static Service, mut rx: mpsc::Receiver<HealthEvent>) {
    while let Some(event) = rx.recv().await {
        if let Some(slot) = service.endpoints.get(event.endpoint as usize) {
            slot.store(event.weight << 1 | u32::from(event.up), Ordering::Release);
        }
        HEALTH_EVENTS.fetch_add(1, Ordering::Relaxed);
        if let Some(flap) = event.flap {
            if flap.remaining.fetch_sub(1, Ordering::AcqRel) == 1 {
                flap.done.notify_one();
            }
        }
    }
}

/// The active checker of endpoint `index`: a TCP connect every probe
/// interval; on a change of state, one event to every service.
async fn check_endpoint(state: &'static State, index: usize) {
    let addr = state.cfg.backends[index];
    let mut up = true;
    let mut ticks = tokio::time::interval(state.cfg.probe_interval);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        let ok = matches!(
            tokio::time::timeout(
                state.cfg.upstream_timeout,
                tokio::net::TcpStream::connect(addr)
            )
            .await,
            Ok(Ok(_))
        );
        if ok == up {
            continue;
        }
        up = ok;
        for service in state.services {
            let event = HealthEvent {
                flap: None,
                endpoint: index as u32,
                weight: 1,
                up,
            };
            let _ = service.health.send(event).await;
        }
    }
}

// ---------------------------------------------------------------- state

static CONNECTIONS: AtomicUsize = AtomicUsize::new(0);
static REQUESTS: AtomicU64 = AtomicU64::new(0);
static HEALTH_EVENTS: AtomicU64 = AtomicU64::new(0);

struct State {
    cfg: Config,
    services: &'static [Service],
    authorities: Vec<Authority>,
    client: Client<HttpConnector>,
    heap_per_service: i64,
}

// ---------------------------------------------------------------- dispatch

/// The request target's room inside a `Job` (the C++ proxy's
/// `Request::kMaxTarget`); longer targets get 414.
const TARGET_CAPACITY: usize = 240;

/// A parsed /svc request on its way from a connection's reading side to
/// its forwarder (256 bytes, the target inline).
struct Job {
    reply: oneshot::Sender<Response<Body>>,
    service: u32,
    target_len: u16,
    keep_alive: bool,
    target: [u8; TARGET_CAPACITY],
}
const _: () = assert!(std::mem::size_of::<Job>() <= 256);

/// One client connection's state shared by its requests: the dispatch
/// channel's sending side and the count of request heads (and bodies)
/// hyper delivered, which the connection's `ClientStream` reads to end its
/// header timeout. Dropped with the connection's service, which ends the
/// forwarder and takes the connection off the count.
struct ConnState {
    dispatch: mpsc::Sender<Job>,
    heads: Arc<AtomicU32>,
}

/// What one request's handler gets of its connection.
struct ConnHandle {
    dispatch: mpsc::Sender<Job>,
    heads: Arc<AtomicU32>,
}

impl ConnHandle {
    /// A request's body was read to its end: the bytes that come next are
    /// the next request head's.
    fn body_done(&self) {
        self.heads.fetch_add(1, Ordering::Release);
    }
}

impl ConnState {
    /// Called by hyper with each whole request head: ends the connection's
    /// header timeout, and hands the connection to the request's handler.
    fn head_done(&self) -> ConnHandle {
        self.heads.fetch_add(1, Ordering::Release);
        ConnHandle {
            dispatch: self.dispatch.clone(),
            heads: self.heads.clone(),
        }
    }
}

impl Drop for ConnState {
    fn drop(&mut self) {
        CONNECTIONS.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A connection's forwarder: one job at a time, over the pooled client.
async fn forwarder(state: &'static State, mut rx: mpsc::Receiver<Job>) {
    while let Some(job) = rx.recv().await {
        let mut response = forward(state, &job).await;
        if !job.keep_alive {
            response
                .headers_mut()
                .insert(CONNECTION, HeaderValue::from_static("close"));
        }
        let _ = job.reply.send(response);
    }
}

async fn forward(state: &'static State, job: &Job) -> Response<Body> {
    let service = &state.services[job.service as usize];
    let endpoint = match service.pick() {
        Some(endpoint) => endpoint,
        None => return text(StatusCode::SERVICE_UNAVAILABLE, "no endpoint up\n"),
    };
    let target = &job.target[..usize::from(job.target_len)];
    let uri = Uri::builder()
        .scheme("http")
        .authority(state.authorities[endpoint].clone())
        .path_and_query(target)
        .build();
    let uri = match uri {
        Ok(uri) => uri,
        Err(_) => return text(StatusCode::BAD_REQUEST, "bad target\n"),
    };
    let request = Request::get(uri)
        .body(Body::empty())
        .expect("a GET with a valid URI");
    let exchange = async {
        let response = state.client.request(request).await?;
        let (parts, body) = response.into_parts();
        let bytes = hyper::body::to_bytes(body).await?;
        Ok::<_, hyper::Error>((parts, bytes))
    };
    match tokio::time::timeout(state.cfg.upstream_timeout, exchange).await {
        Ok(Ok((parts, bytes))) => {
            let mut response = Response::new(Body::from(bytes));
            *response.status_mut() = parts.status;
            for name in ["x-endpoint", "x-path", "content-type"] {
                if let Some(v) = parts.headers.get(name) {
                    response.headers_mut().insert(name, v.clone());
                }
            }
            response
        }
        _ => text(StatusCode::BAD_GATEWAY, "upstream failed\n"),
    }
}

fn text(status: StatusCode, body: &'static str) -> Response<Body> {
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    response
}

fn wants_keep_alive(request: &Request<Body>) -> bool {
    let connection = request
        .headers()
        .get(CONNECTION)
        .and_then(|v| v.to_str().ok());
    let has = |token: &str| {
        connection.map_or(false, |v| {
            v.split(',').any(|t| t.trim().eq_ignore_ascii_case(token))
        })
    };
    match request.version() {
        Version::HTTP_10 => has("keep-alive"),
        _ => !has("close"),
    }
}

/// The service id of a `/svc/<id>/...` path, None if not a number below S.
fn service_id(path: &str, services: usize) -> Option<u32> {
    let rest = path.strip_prefix("/svc/")?;
    let (id, _) = rest.split_once('/')?;
    if id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let id: u64 = id.parse().ok()?;
    if id >= services as u64 {
        return None;
    }
    u32::try_from(id).ok()
}

/// The most request body bytes read (and dropped) before an answer (the C++
/// proxy's body limit); past it, 400 and the connection closes, as a
/// malformed request.
const MAX_BODY: u64 = 64 * 1024;

/// Reads a request's body to its end, dropping it, so that hyper keeps the
/// connection alive after the answer. False: too long, or broken.
async fn consume_body(body: &mut Body) -> bool {
    let mut total = 0u64;
    while let Some(chunk) = body.data().await {
        match chunk {
            Ok(bytes) => {
                total += bytes.len() as u64;
                if total > MAX_BODY {
                    return false;
                }
            }
            Err(_) => return false,
        }
    }
    true
}

async fn handle(
    state: &'static State,
    conn: ConnHandle,
    mut request: Request<Body>,
) -> Result<Response<Body>, Infallible> {
    if !request.body().is_end_stream() {
        if !consume_body(request.body_mut()).await {
            let mut response = text(StatusCode::BAD_REQUEST, "bad or too long body\n");
            response
                .headers_mut()
                .insert(CONNECTION, HeaderValue::from_static("close"));
            return Ok(response);
        }
        conn.body_done();
    }
    let dispatch = conn.dispatch;
    let path = request.uri().path();
    if path == "/admin/stats" {
        if request.method() != Method::GET {
            return Ok(text(StatusCode::METHOD_NOT_ALLOWED, "method not allowed\n"));
        }
        return Ok(stats(state));
    }
    if path == "/admin/flap" {
        if request.method() != Method::POST {
            return Ok(text(StatusCode::METHOD_NOT_ALLOWED, "method not allowed\n"));
        }
        return Ok(flap(state, request.uri().query().unwrap_or("")).await);
    }
    if !path.starts_with("/svc/") && path != "/svc" {
        return Ok(text(StatusCode::NOT_FOUND, "not found\n"));
    }
    REQUESTS.fetch_add(1, Ordering::Relaxed);
    if request.method() != Method::GET {
        return Ok(text(StatusCode::METHOD_NOT_ALLOWED, "method not allowed\n"));
    }
    let service = match service_id(path, state.cfg.services) {
        Some(service) => service,
        None => return Ok(text(StatusCode::NOT_FOUND, "no such service\n")),
    };
    let target = request
        .uri()
        .path_and_query()
        .map_or(path, |pq| pq.as_str())
        .as_bytes();
    if target.len() > TARGET_CAPACITY {
        return Ok(text(StatusCode::URI_TOO_LONG, "target too long\n"));
    }
    let (reply, response) = oneshot::channel();
    let mut job = Job {
        reply,
        service,
        target_len: target.len() as u16,
        keep_alive: wants_keep_alive(&request),
        target: [0; TARGET_CAPACITY],
    };
    job.target[..target.len()].copy_from_slice(target);
    if dispatch.send(job).await.is_err() {
        return Ok(text(StatusCode::BAD_GATEWAY, "forwarder gone\n"));
    }
    Ok(response
        .await
        .unwrap_or_else(|_| text(StatusCode::BAD_GATEWAY, "forwarder gone\n")))
}

fn rss_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

fn stats(state: &'static State) -> Response<Body> {
    let body = format!(
        "{{\"channel\":\"hyper\",\"services\":{},\"connections\":{},\"requests\":{},\
         \"heap_requested_bytes\":{},\"heap_per_service\":{},\"rss_bytes\":{},\
         \"health_events\":{}}}\n",
        state.cfg.services,
        CONNECTIONS.load(Ordering::Relaxed),
        REQUESTS.load(Ordering::Relaxed),
        heap_requested(),
        state.heap_per_service,
        rss_bytes(),
        HEALTH_EVENTS.load(Ordering::Relaxed),
    );
    let mut response = Response::new(Body::from(body));
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// `POST /admin/flap?first=A&count=N&endpoint=J&state=down|up[&weight=W]`:
/// one event into the health channel of each service A..A+N-1; answers
/// once the drains applied all of them.
async fn flap(state: &'static State, query: &str) -> Response<Body> {
    let (mut first, mut count, mut endpoint, mut up, mut weight) = (None, None, None, None, 1u32);
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let number = v
            .parse::<u64>()
            .ok()
            .filter(|_| v.bytes().all(|b| b.is_ascii_digit()));
        match k {
            "first" => first = number,
            "count" => count = number,
            "endpoint" => endpoint = number,
            "state" => {
                up = match v {
                    "up" => Some(true),
                    "down" => Some(false),
                    _ => return text(StatusCode::BAD_REQUEST, "state must be up or down\n"),
                }
            }
            "weight" => match number
                .and_then(|w| u32::try_from(w).ok())
                .filter(|&w| w < 1 << 31)
            {
                Some(w) => weight = w,
                None => return text(StatusCode::BAD_REQUEST, "bad weight\n"),
            },
            _ => return text(StatusCode::BAD_REQUEST, "unknown parameter\n"),
        }
    }
    let (first, count, endpoint, up) = match (first, count, endpoint, up) {
        (Some(first), Some(count), Some(endpoint), Some(up)) => (first, count, endpoint, up),
        _ => {
            return text(
                StatusCode::BAD_REQUEST,
                "need first, count, endpoint and state\n",
            )
        }
    };
    let services = state.cfg.services as u64;
    if first > services || count > services - first || endpoint >= state.cfg.backends.len() as u64 {
        return text(StatusCode::BAD_REQUEST, "out of range\n");
    }
    let (first, count) = (first as usize, count as usize);
    let pending = Arc::new(Flap {
        remaining: AtomicUsize::new(count),
        done: Notify::new(),
    });
    for service in &state.services[first..first + count] {
        let event = HealthEvent {
            flap: Some(pending.clone()),
            endpoint: endpoint as u32,
            weight,
            up,
        };
        if service.health.send(event).await.is_err() {
            return text(StatusCode::SERVICE_UNAVAILABLE, "health channel closed\n");
        }
    }
    // The last drain to apply one stores a permit with notify_one, so the
    // wake-up is not lost if it comes before the wait.
    while pending.remaining.load(Ordering::Acquire) != 0 {
        pending.done.notified().await;
    }
    let mut response = Response::new(Body::from(format!("applied {count}")));
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("text/plain"));
    response
}

// ---------------------------------------------------------------- accept

/// Timeouts of one client connection, enforced on its byte stream:
/// - header timeout: from the first byte of a request head, the head must
///   be complete (hyper calls the service, which bumps `heads`) within
///   `header`, or reads fail with TimedOut and hyper closes the connection.
///   hyper 0.14.19's own `http1_header_read_timeout` never arms its timer
///   (`h1_header_read_timeout_running` is never set), so it is done here.
/// - idle timeout: past `idle` (non-zero) with no byte read or written,
///   reads end (EOF) and hyper closes the connection.
struct ClientStream {
    inner: AddrStream,
    heads: Arc<AtomicU32>,
    heads_seen: u32,
    head_armed: bool,
    head_deadline: Option<Pin<Box<Sleep>>>,
    idle_deadline: Option<Pin<Box<Sleep>>>,
    timeouts: &'static Timeouts,
}

struct Timeouts {
    header: Duration,
    idle: Duration,
}

impl ClientStream {
    fn new(inner: AddrStream, timeouts: &'static Timeouts) -> Self {
        let idle_deadline =
            (!timeouts.idle.is_zero()).then(|| Box::pin(tokio::time::sleep(timeouts.idle)));
        ClientStream {
            inner,
            heads: Arc::new(AtomicU32::new(0)),
            heads_seen: 0,
            head_armed: false,
            head_deadline: None,
            idle_deadline,
            timeouts,
        }
    }

    fn touch(&mut self) {
        if let Some(sleep) = &mut self.idle_deadline {
            sleep.as_mut().reset(Instant::now() + self.timeouts.idle);
        }
    }

    fn arm_head(&mut self) {
        let deadline = Instant::now() + self.timeouts.header;
        match &mut self.head_deadline {
            Some(sleep) => sleep.as_mut().reset(deadline),
            None => self.head_deadline = Some(Box::pin(tokio::time::sleep_until(deadline))),
        }
        self.head_armed = true;
    }
}

impl AsyncRead for ClientStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let heads = self.heads.load(Ordering::Acquire);
        if heads != self.heads_seen {
            self.heads_seen = heads;
            self.head_armed = false;
        }
        let before = buf.filled().len();
        match Pin::new(&mut self.inner).poll_read(cx, buf) {
            Poll::Ready(r) => {
                if buf.filled().len() != before {
                    self.touch();
                    if !self.head_armed {
                        self.arm_head();
                    }
                }
                Poll::Ready(r)
            }
            Poll::Pending => {
                if self.head_armed {
                    if let Some(sleep) = &mut self.head_deadline {
                        if sleep.as_mut().poll(cx).is_ready() {
                            let e = io::Error::new(io::ErrorKind::TimedOut, "request head timeout");
                            return Poll::Ready(Err(e));
                        }
                    }
                }
                match &mut self.idle_deadline {
                    Some(sleep) => sleep.as_mut().poll(cx).map(|()| Ok(())),
                    None => Poll::Pending,
                }
            }
        }
    }
}

impl AsyncWrite for ClientStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write(cx, buf);
        if matches!(r, Poll::Ready(Ok(n)) if n > 0) {
            self.touch();
        }
        r
    }
    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        if matches!(r, Poll::Ready(Ok(n)) if n > 0) {
            self.touch();
        }
        r
    }
    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// hyper's `AddrIncoming` (its accept loop), yielding `ClientStream`s.
struct Incoming {
    inner: AddrIncoming,
    timeouts: &'static Timeouts,
}

impl Accept for Incoming {
    type Conn = ClientStream;
    type Error = io::Error;

    fn poll_accept(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<ClientStream, io::Error>>> {
        let timeouts = self.timeouts;
        Pin::new(&mut self.inner)
            .poll_accept(cx)
            .map(|next| next.map(|r| r.map(|inner| ClientStream::new(inner, timeouts))))
    }
}

// ---------------------------------------------------------------- main

async fn run(cfg: Config) -> i32 {
    // The service table: S health channels with their drain tasks. Its
    // heap cost per service is measured around its construction.
    let heap_before = heap_requested();
    let mut services = Vec::with_capacity(cfg.services);
    let mut receivers = Vec::with_capacity(cfg.services);
    for _ in 0..cfg.services {
        let (tx, rx) = mpsc::channel(HEALTH_CAPACITY);
        let endpoints = (0..cfg.backends.len())
            .map(|_| AtomicU32::new(1 << 1 | 1))
            .collect();
        services.push(Service {
            health: tx,
            endpoints,
            next: AtomicU32::new(0),
        });
        receivers.push(rx);
    }
    let services: &'static [Service] = Box::leak(services.into_boxed_slice());
    for (service, rx) in services.iter().zip(receivers) {
        tokio::spawn(drain(service, rx));
    }
    let heap_per_service = (heap_requested() - heap_before) / cfg.services as i64;

    let mut connector = HttpConnector::new();
    connector.set_nodelay(true);
    connector.set_connect_timeout(Some(cfg.upstream_timeout));
    let client = Client::builder().pool_idle_timeout(None).build(connector);
    let authorities = cfg
        .backends
        .iter()
        .map(|a| Authority::try_from(a.to_string().as_str()).expect("an address is an authority"))
        .collect();

    // A large accept backlog: the load script opens thousands of
    // connections at once.
    let listener = match (|| {
        let socket = match cfg.listen {
            SocketAddr::V4(_) => tokio::net::TcpSocket::new_v4()?,
            SocketAddr::V6(_) => tokio::net::TcpSocket::new_v6()?,
        };
        socket.set_reuseaddr(true)?;
        socket.bind(cfg.listen)?;
        socket.listen(4096)
    })() {
        Ok(l) => l,
        Err(e) => {
            eprintln!("leanchan-proxy-hyper: cannot listen on {}: {e}", cfg.listen);
            return 1;
        }
    };
    let mut incoming = match AddrIncoming::from_listener(listener) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("leanchan-proxy-hyper: cannot listen on {}: {e}", cfg.listen);
            return 1;
        }
    };
    incoming.set_nodelay(true);
    let port = incoming.local_addr().port();

    let state: &'static State = Box::leak(Box::new(State {
        cfg,
        services,
        authorities,
        client,
        heap_per_service,
    }));

    if !state.cfg.probe_interval.is_zero() {
        for index in 0..state.cfg.backends.len() {
            tokio::spawn(check_endpoint(state, index));
        }
    }

    use tokio::signal::unix::{signal, SignalKind};
    let (mut term, mut int) = match (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) {
        (Ok(t), Ok(i)) => (t, i),
        _ => {
            eprintln!("leanchan-proxy-hyper: cannot install signal handlers");
            return 1;
        }
    };

    let make_service = make_service_fn(move |stream: &ClientStream| {
        CONNECTIONS.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = mpsc::channel(DISPATCH_CAPACITY);
        tokio::spawn(forwarder(state, rx));
        let conn = ConnState {
            dispatch: tx,
            heads: stream.heads.clone(),
        };
        async move {
            Ok::<_, Infallible>(service_fn(move |request| {
                handle(state, conn.head_done(), request)
            }))
        }
    });

    let (stop_tx, stop_rx) = oneshot::channel::<()>();
    let timeouts: &'static Timeouts = Box::leak(Box::new(Timeouts {
        header: state.cfg.header_timeout,
        idle: state.cfg.idle_timeout,
    }));
    let server = Server::builder(Incoming {
        inner: incoming,
        timeouts,
    })
    .http1_only(true)
    .http1_keepalive(true)
    .serve(make_service)
    .with_graceful_shutdown(async {
        let _ = stop_rx.await;
    });

    {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "ready port={port}");
        let _ = out.flush();
    }

    // After the signal, hyper stops accepting, finishes the requests it has
    // read (with `Connection: close`) and closes idle connections; past
    // upstream-timeout + 1 s the process exits regardless.
    let deadline = state.cfg.upstream_timeout + Duration::from_millis(800);
    let stop = async move {
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
        let _ = stop_tx.send(());
        tokio::time::sleep(deadline).await;
    };
    tokio::select! {
        result = server => {
            if let Err(e) = result {
                eprintln!("leanchan-proxy-hyper: server error: {e}");
                return 1;
            }
        }
        _ = stop => {}
    }
    0
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let cfg = match parse_args(&args) {
        Ok(Some(cfg)) => cfg,
        Ok(None) => {
            print!("{USAGE}");
            std::process::exit(0);
        }
        Err(message) => {
            eprintln!("leanchan-proxy-hyper: {message}");
            std::process::exit(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(cfg.threads)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("leanchan-proxy-hyper: cannot start the runtime: {e}");
            std::process::exit(1);
        }
    };
    let code = runtime.block_on(run(cfg));
    runtime.shutdown_timeout(Duration::from_millis(100));
    std::process::exit(code);
}
