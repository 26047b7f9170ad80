//! Engine speed: simulated scheduling events per wall-clock second on a
//! pinned ping-pong and an overloaded mix (hundreds of tasks on 40 CPUs).
//! Run with `cargo bench -p schedlab`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use schedlab::engine::{Sim, SimConfig};
use schedlab::policy::{Era, PolicySpec};
use schedlab::topology::{preset, Topology};
use schedlab::workload::program::{Workload, WorkloadSpec};

fn config(machine: &str, era: Era, workload: &str, duration_ns: u64) -> SimConfig {
    let topology = Topology::from_spec(&preset(machine).unwrap()).unwrap();
    let spec: WorkloadSpec = serde_json::from_str(workload).unwrap();
    SimConfig {
        policy: PolicySpec::era(era).resolve(topology.ncpus()).unwrap(),
        workload: Workload::compile(&spec, topology.ncpus()).unwrap(),
        topology,
        seed: 1,
        start_ns: 0,
        duration_ns: Some(duration_ns),
        trace: None,
        measure_from_ns: 0,
        check_invariants: false,
        why: None,
    }
}

fn pinned_ping_pong() -> SimConfig {
    let side = |name: &str, cpu: u32, first: &str, second: &str| {
        format!(
            r#"{{"name":"{name}","affinity":"{cpu}","program":[{{"forever":[{first},{second}]}}]}}"#
        )
    };
    let (w0, r0) = (
        r#"{"write":{"chan":0,"bytes":1}}"#,
        r#"{"read":{"chan":0,"bytes":1}}"#,
    );
    let (w1, r1) = (
        r#"{"write":{"chan":1,"bytes":1}}"#,
        r#"{"read":{"chan":1,"bytes":1}}"#,
    );
    let json = format!(
        r#"{{"channels":[{{"kind":"pipe"}},{{"kind":"pipe"}}],"tasks":[{},{}]}}"#,
        side("a", 0, w0, r1),
        side("b", 1, r0, w1)
    );
    config("ivb-ep-2s", Era::V6_5, &json, 200_000_000)
}

fn overloaded_mix() -> SimConfig {
    let mut chans = Vec::new();
    let mut tasks = Vec::new();
    for i in 0..150 {
        let (a, b) = (2 * i, 2 * i + 1);
        chans.push(r#"{"kind":"pipe"}"#.to_string());
        chans.push(r#"{"kind":"pipe"}"#.to_string());
        tasks.push(format!(
            r#"{{"name":"c{i}","program":[{{"forever":[{{"write":{{"chan":{a},"bytes":100}}}},{{"read":{{"chan":{b},"bytes":100}}}},{{"compute":{{"ns":5000,"jitter_pct":50}}}}]}}]}}"#
        ));
        tasks.push(format!(
            r#"{{"name":"s{i}","program":[{{"forever":[{{"read":{{"chan":{a},"bytes":100}}}},{{"compute":{{"ns":8000,"jitter_pct":50}}}},{{"write":{{"chan":{b},"bytes":100}}}}]}}]}}"#
        ));
    }
    for i in 0..100 {
        tasks.push(format!(
            r#"{{"name":"h{i}","program":[{{"forever":[{{"compute":{{"ns":2000000,"jitter_pct":50}}}},{{"sleep":{{"ns":500000,"jitter_pct":50}}}}]}}]}}"#
        ));
    }
    let json = format!(
        r#"{{"channels":[{}],"tasks":[{}]}}"#,
        chans.join(","),
        tasks.join(",")
    );
    config("ivb-ep-2s", Era::V6_5, &json, 100_000_000)
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("engine");
    group.sample_size(10);
    for (name, cfg) in [
        ("pinned_ping_pong", pinned_ping_pong()),
        ("overloaded_mix_400_tasks", overloaded_mix()),
    ] {
        let events = Sim::new(&cfg).unwrap().run().unwrap().events;
        group.throughput(Throughput::Elements(events));
        group.bench_function(name, |b| {
            b.iter(|| Sim::new(&cfg).unwrap().run().unwrap().events)
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
