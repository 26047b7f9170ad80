//! The machine as the kernel describes it: CPUs with their node, package,
//! LLC and core (sysfs, else `lscpu -p`), the SLIT distances between nodes
//! that have CPUs, the idle states, the CPU model and clock.

use schedlab::topology::{self, CpuPlace, Layout};
use std::collections::BTreeMap;
use std::path::Path;

const CPU: &str = "/sys/devices/system/cpu";
const NODE: &str = "/sys/devices/system/node";

/// One idle state as the idle driver declares it.
#[derive(Debug, Clone, PartialEq)]
pub struct IdleState {
    /// Its directory index (stateN).
    pub index: usize,
    pub name: String,
    pub latency_ns: u64,
    pub residency_ns: u64,
}

#[derive(Debug, Clone)]
pub struct Machine {
    /// OS CPU numbers, in the order of the machine's CPUs 0..n.
    pub os_cpus: Vec<u32>,
    pub layout: Layout,
    /// Places by OS CPU number (dense node ids), for choosing probe pairs.
    pub places: BTreeMap<u32, CpuPlace>,
    pub distances: Option<Vec<Vec<u32>>>,
    pub source: String,
    /// Notes on what could not be read.
    pub notes: Vec<String>,
}

fn read(path: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}

/// "0-3,8,10-11" -> [0, 1, 2, 3, 8, 10, 11].
pub fn parse_list(s: &str) -> Option<Vec<u32>> {
    let mut out = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (u32, u32) = (a.parse().ok()?, b.parse().ok()?);
                if b < a || b - a > 65536 {
                    return None;
                }
                out.extend(a..=b);
            }
            None => out.push(part.parse().ok()?),
        }
    }
    Some(out)
}

/// The CPU's NUMA node from its `nodeN` link (0 without one).
fn cpu_node(cpu: u32) -> u32 {
    std::fs::read_dir(format!("{CPU}/cpu{cpu}"))
        .ok()
        .and_then(|dir| {
            dir.flatten().find_map(|e| {
                e.file_name()
                    .to_str()
                    .and_then(|n| n.strip_prefix("node"))
                    .and_then(|n| n.parse().ok())
            })
        })
        .unwrap_or(0)
}

/// The lowest CPU sharing `cpu`'s last-level cache, if sysfs lists caches.
fn cpu_llc(cpu: u32) -> Option<u32> {
    let dir = std::fs::read_dir(format!("{CPU}/cpu{cpu}/cache")).ok()?;
    let mut best: Option<(u32, u32)> = None;
    for e in dir.flatten() {
        let p = e.path();
        if !e.file_name().to_string_lossy().starts_with("index") {
            continue;
        }
        let Some(level) = read(p.join("level")).and_then(|l| l.parse::<u32>().ok()) else {
            continue;
        };
        if read(p.join("type")).as_deref() == Some("Instruction") {
            continue;
        }
        let Some(first) = read(p.join("shared_cpu_list"))
            .and_then(|l| parse_list(&l))
            .and_then(|l| l.first().copied())
        else {
            continue;
        };
        if best.is_none_or(|(l, _)| level > l) {
            best = Some((level, first));
        }
    }
    best.map(|(_, first)| first)
}

fn from_sysfs() -> Result<Machine, String> {
    let online = read(format!("{CPU}/online"))
        .and_then(|s| parse_list(&s))
        .ok_or_else(|| format!("{CPU}/online is not readable"))?;
    let mut notes = Vec::new();
    let mut raw = Vec::new();
    for &cpu in &online {
        let t = format!("{CPU}/cpu{cpu}/topology");
        let package = read(format!("{t}/physical_package_id"))
            .and_then(|s| s.parse::<i64>().ok())
            .ok_or_else(|| format!("{t}/physical_package_id is not readable"))?
            .max(0) as u32;
        let siblings = read(format!("{t}/core_cpus_list"))
            .or_else(|| read(format!("{t}/thread_siblings_list")))
            .and_then(|s| parse_list(&s))
            .ok_or_else(|| format!("{t}/thread_siblings_list is not readable"))?;
        let core = siblings.first().copied().unwrap_or(cpu);
        let llc = cpu_llc(cpu).unwrap_or_else(|| {
            if notes.is_empty() {
                notes
                    .push("no cache list in sysfs: the LLC is taken to be the package".to_string());
            }
            u32::MAX - package
        });
        raw.push((cpu, cpu_node(cpu), package, llc, core));
    }
    // Dense node ids over the nodes that have CPUs, in node order.
    let mut nodes: Vec<u32> = raw.iter().map(|r| r.1).collect();
    nodes.sort_unstable();
    nodes.dedup();
    let distances = slit(&nodes, &mut notes);
    let mut places = BTreeMap::new();
    let mut list = Vec::new();
    for (i, &(cpu, node, package, llc, core)) in raw.iter().enumerate() {
        let node = nodes.binary_search(&node).expect("collected") as u32;
        let p = CpuPlace {
            cpu: i as u32,
            node,
            package,
            llc,
            core,
        };
        places.insert(cpu, p);
        list.push(p);
    }
    if online.iter().enumerate().any(|(i, &c)| c as usize != i) {
        notes.push(format!(
            "online CPUs {} are numbered 0..{} here",
            read(format!("{CPU}/online")).unwrap_or_default(),
            online.len()
        ));
    }
    Ok(Machine {
        os_cpus: online,
        layout: Layout::Cpus(list),
        places,
        distances,
        source: "sysfs (/sys/devices/system/cpu, /sys/devices/system/node)".to_string(),
        notes,
    })
}

/// The SLIT rows of the nodes that have CPUs, if there are several and they
/// form a valid matrix.
fn slit(nodes: &[u32], notes: &mut Vec<String>) -> Option<Vec<Vec<u32>>> {
    if nodes.len() < 2 {
        return None;
    }
    // Each node's distance file has one column per online node, in order.
    let online = read(format!("{NODE}/online")).and_then(|s| parse_list(&s))?;
    let mut rows = Vec::new();
    for &n in nodes {
        let file = format!("{NODE}/node{n}/distance");
        let Some(all) = read(&file).map(|s| {
            s.split_whitespace()
                .filter_map(|v| v.parse::<u32>().ok())
                .collect::<Vec<_>>()
        }) else {
            notes.push(format!(
                "{file} is not readable: distances 10 local, 20 remote"
            ));
            return None;
        };
        let row: Option<Vec<u32>> = nodes
            .iter()
            .map(|m| {
                online
                    .iter()
                    .position(|o| o == m)
                    .and_then(|i| all.get(i).copied())
            })
            .collect();
        match row {
            Some(r) => rows.push(r),
            None => {
                notes.push(format!(
                    "{file} does not list every node: distances 10 local, 20 remote"
                ));
                return None;
            }
        }
    }
    Some(rows)
}

fn from_lscpu() -> Result<Machine, String> {
    let out = std::process::Command::new("lscpu")
        .arg("-p")
        .output()
        .map_err(|e| format!("lscpu -p: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let spec = topology::parse_lscpu("lscpu", &text).map_err(|e| format!("lscpu -p: {e}"))?;
    let Layout::Cpus(list) = &spec.layout else {
        unreachable!("lscpu gives a CPU list")
    };
    let mut os_cpus: Vec<u32> = list.iter().map(|p| p.cpu).collect();
    os_cpus.sort_unstable();
    let mut dense = list.clone();
    dense.sort_by_key(|p| p.cpu);
    let places = dense.iter().map(|p| (p.cpu, *p)).collect();
    for (i, p) in dense.iter_mut().enumerate() {
        p.cpu = i as u32;
    }
    Ok(Machine {
        os_cpus,
        layout: Layout::Cpus(dense),
        places,
        distances: None,
        source: "lscpu -p (sysfs topology was not readable)".to_string(),
        notes: vec![],
    })
}

/// The machine from sysfs, else from `lscpu -p`.
pub fn machine() -> Result<Machine, String> {
    match from_sysfs() {
        Ok(m) => Ok(m),
        Err(sysfs) => from_lscpu().map_err(|lscpu| format!("{sysfs}; {lscpu}")),
    }
}

/// The idle states of `cpu` that are enabled, shallowest first.
pub fn idle_states(cpu: u32) -> Vec<IdleState> {
    let mut out = Vec::new();
    for index in 0..16 {
        let d = format!("{CPU}/cpu{cpu}/cpuidle/state{index}");
        let Some(name) = read(format!("{d}/name")) else {
            break;
        };
        if read(format!("{d}/disable")).as_deref() == Some("1") {
            continue;
        }
        let us = |f: &str| read(format!("{d}/{f}")).and_then(|v| v.parse::<u64>().ok());
        let (Some(lat), Some(res)) = (us("latency"), us("residency")) else {
            continue;
        };
        out.push(IdleState {
            index,
            name,
            latency_ns: lat * 1000,
            residency_ns: res * 1000,
        });
    }
    out
}

/// How often `cpu` entered each idle state (by state index).
pub fn idle_usage(cpu: u32) -> Vec<u64> {
    (0..16)
        .map_while(|i| read(format!("{CPU}/cpu{cpu}/cpuidle/state{i}/usage")))
        .map(|v| v.parse().unwrap_or(0))
        .collect()
}

pub fn idle_driver() -> Option<String> {
    read(format!("{CPU}/cpuidle/current_driver"))
}

fn cpuinfo(key: &str) -> Option<String> {
    let text = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == key).then(|| v.trim().to_string())
    })
}

pub fn cpu_model() -> String {
    cpuinfo("model name").unwrap_or_default()
}

/// Whether the kernel runs as a guest (the CPU's hypervisor flag).
pub fn is_guest() -> bool {
    cpuinfo("flags").is_some_and(|f| f.split_whitespace().any(|x| x == "hypervisor"))
}

/// The clock in MHz and where it was read.
pub fn clock_mhz(cpu: u32) -> Option<(u32, String)> {
    if let Some(khz) =
        read(format!("{CPU}/cpu{cpu}/cpufreq/cpuinfo_max_freq")).and_then(|v| v.parse::<u64>().ok())
    {
        return Some(((khz / 1000) as u32, "cpufreq cpuinfo_max_freq".into()));
    }
    cpuinfo("cpu MHz")
        .and_then(|v| v.parse::<f64>().ok())
        .map(|m| (m.round() as u32, "/proc/cpuinfo cpu MHz".into()))
}

/// A cache size as sysfs writes it ("48K", "480M", "1G") in KiB.
pub fn parse_cache_size(s: &str) -> Option<u64> {
    let (digits, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len()));
    let n: u64 = digits.parse().ok()?;
    let kib = match unit {
        "" => n / 1024,
        "K" => n,
        "M" => n * 1024,
        "G" => n * 1024 * 1024,
        _ => return None,
    };
    (kib > 0).then_some(kib)
}

/// The size in KiB of `cpu`'s last-level cache (the highest-level data or
/// unified cache sysfs lists) and where it was read.
pub fn llc_kib(cpu: u32) -> Option<(u64, String)> {
    let mut best: Option<(u32, u64, usize)> = None;
    for index in 0..16 {
        let d = format!("{CPU}/cpu{cpu}/cache/index{index}");
        let Some(level) = read(format!("{d}/level")).and_then(|v| v.parse::<u32>().ok()) else {
            continue;
        };
        if read(format!("{d}/type")).as_deref() == Some("Instruction") {
            continue;
        }
        let Some(kib) = read(format!("{d}/size")).and_then(|v| parse_cache_size(&v)) else {
            continue;
        };
        if best.is_none_or(|(l, _, _)| level > l) {
            best = Some((level, kib, index));
        }
    }
    best.map(|(level, kib, index)| {
        (
            kib,
            format!("sysfs cpu{cpu}/cache/index{index}/size (the L{level} cache)"),
        )
    })
}

/// MemAvailable from /proc/meminfo, MiB.
pub fn mem_available_mib() -> Option<usize> {
    parse_mem_available_mib(&std::fs::read_to_string("/proc/meminfo").ok()?)
}

fn parse_mem_available_mib(meminfo: &str) -> Option<usize> {
    meminfo.lines().find_map(|l| {
        let kib = l.strip_prefix("MemAvailable:")?.trim().strip_suffix("kB")?;
        kib.trim().parse::<usize>().ok().map(|k| k / 1024)
    })
}

const SLAB: &str = "/sys/kernel/slab";

/// The kmalloc caches a small AF_UNIX message's skb data may come from.
const SKB_DATA_CACHES: [&str; 4] = ["kmalloc-512", "kmalloc-1k", "kmalloc-2k", "kmalloc-4k"];

/// The SLUB caches of an AF_UNIX skb as `root` (/sys/kernel/slab) shows
/// them, and where they were read; None where the head cache is not
/// listed (another allocator, or sysfs without slab).
pub fn skb_slabs(root: &Path) -> Option<(topology::SkbSlabs, String)> {
    let head = slab_cache(root, "skbuff_head_cache")?;
    let data: Vec<topology::SlabCache> = SKB_DATA_CACHES
        .iter()
        .filter_map(|name| slab_cache(root, name))
        .collect();
    let names: Vec<&str> = std::iter::once(head.name.as_str())
        .chain(data.iter().map(|c| c.name.as_str()))
        .collect();
    let from = format!(
        "{}/{{{}}}/{{object_size,objs_per_slab,cpu_partial,min_partial}}",
        root.display(),
        names.join(",")
    );
    Some((topology::SkbSlabs { head, data }, from))
}

fn slab_cache(root: &Path, name: &str) -> Option<topology::SlabCache> {
    let field = |f: &str| read(root.join(name).join(f))?.parse::<u32>().ok();
    Some(topology::SlabCache {
        name: name.to_string(),
        object_size: field("object_size")?,
        objs_per_slab: field("objs_per_slab")?,
        cpu_partial: field("cpu_partial")?,
        min_partial: field("min_partial")?,
    })
}

pub fn skb_slabs_here() -> Option<(topology::SkbSlabs, String)> {
    skb_slabs(Path::new(SLAB))
}

pub fn kernel_release() -> String {
    read("/proc/sys/kernel/osrelease").unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_parse() {
        assert_eq!(parse_list("0-3,8,10-11"), Some(vec![0, 1, 2, 3, 8, 10, 11]));
        assert_eq!(parse_list("0"), Some(vec![0]));
        assert_eq!(parse_list("3-1"), None);
        assert_eq!(parse_list("x"), None);
    }

    #[test]
    fn available_memory_parses_in_mib() {
        let text = "MemTotal:       24684132 kB\nMemFree:        22550812 kB\nMemAvailable:   24234532 kB\n";
        assert_eq!(parse_mem_available_mib(text), Some(23_666));
        assert_eq!(parse_mem_available_mib("MemTotal: 1 kB\n"), None);
    }

    /// The skb caches as SLUB's sysfs lists them: the head cache and the
    /// kmalloc caches that exist; nothing without the head cache.
    #[test]
    fn skb_slabs_are_read_from_slub_sysfs() {
        let root = std::env::temp_dir().join(format!("schedlab-slab-{}", std::process::id()));
        let write = |cache: &str, size: u32, objs: u32| {
            let d = root.join(cache);
            std::fs::create_dir_all(&d).unwrap();
            for (f, v) in [
                ("object_size", size),
                ("objs_per_slab", objs),
                ("cpu_partial", 52),
                ("min_partial", 5),
            ] {
                std::fs::write(d.join(f), format!("{v}\n")).unwrap();
            }
        };
        assert!(skb_slabs(&root).is_none());
        write("skbuff_head_cache", 224, 16);
        write("kmalloc-512", 512, 16);
        write("kmalloc-2k", 2048, 16);
        let (slabs, from) = skb_slabs(&root).unwrap();
        assert_eq!(slabs.head.object_size, 224);
        assert_eq!(slabs.head.cpu_partial, 52);
        let names: Vec<&str> = slabs.data.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["kmalloc-512", "kmalloc-2k"]);
        assert!(
            from.contains("skbuff_head_cache,kmalloc-512,kmalloc-2k"),
            "{from}"
        );
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn cache_sizes_parse_in_kib() {
        assert_eq!(parse_cache_size("48K"), Some(48));
        assert_eq!(parse_cache_size("491520K"), Some(491_520));
        assert_eq!(parse_cache_size("32M"), Some(32 * 1024));
        assert_eq!(parse_cache_size("1G"), Some(1024 * 1024));
        assert_eq!(parse_cache_size("2048"), Some(2));
        assert_eq!(parse_cache_size("12X"), None);
        assert_eq!(parse_cache_size("K"), None);
        assert_eq!(parse_cache_size("0K"), None);
    }
}
