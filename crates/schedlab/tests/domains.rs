//! Domain hierarchies of every era on the two seed machines, held against the
//! kernels' templates (2.6.27/2.6.28 include/linux/topology.h and
//! arch/x86/include/asm/topology.h; v4.15 and v6.5 sd_init() in
//! kernel/sched/topology.c). The expected values are written out here by hand.

use schedlab::domains::Domains;
use schedlab::policy::{Era, PolicySpec};
use schedlab::topology::{preset, Topology};

/// One expected domain of CPU 0: level, span, number of groups, flag names,
/// flag bits, and (min_interval, max_interval, busy_factor, imbalance_pct,
/// cache_nice_tries, [busy, idle, newidle, wake, forkexec] idx).
type Row = (
    &'static str,
    &'static str,
    usize,
    &'static str,
    u32,
    (u32, u32, u32, u32, u32, [u32; 5]),
);

fn build(machine: &str, era: Era) -> (Topology, Domains) {
    let topo = Topology::from_spec(&preset(machine).unwrap()).unwrap();
    let policy = PolicySpec::era(era).resolve(topo.ncpus()).unwrap();
    let domains = Domains::build(&topo, &policy).unwrap();
    (topo, domains)
}

fn check(machine: &str, era: Era, expected: &[Row]) {
    let (_, domains) = build(machine, era);
    let got: Vec<_> = domains.of(0).collect();
    assert_eq!(
        got.iter().map(|d| d.level).collect::<Vec<_>>(),
        expected.iter().map(|r| r.0).collect::<Vec<_>>(),
        "{machine} {era}: levels"
    );
    for (d, (level, span, groups, flags, bits, params)) in got.iter().zip(expected) {
        let ctx = format!("{machine} {era} {level}");
        let p = &d.params;
        assert_eq!(d.span.to_list_string(), *span, "{ctx}: span");
        assert_eq!(d.groups.len(), *groups, "{ctx}: groups");
        assert_eq!(p.flags.names(era).join("|"), *flags, "{ctx}: flags");
        assert_eq!(p.flags.kernel_bits(era), *bits, "{ctx}: flag bits");
        let idx = [
            p.busy_idx,
            p.idle_idx,
            p.newidle_idx,
            p.wake_idx,
            p.forkexec_idx,
        ];
        assert_eq!(
            (
                p.min_interval_ms,
                p.max_interval_ms,
                p.busy_factor,
                p.imbalance_pct,
                p.cache_nice_tries,
                idx
            ),
            *params,
            "{ctx}: (min, max, busy_factor, imbalance_pct, cache_nice_tries, idx)"
        );
    }
}

// The 16-CPU 2008 box: 4 nodes x 4 cores sharing an L3, no SMT. SIBLING is a
// single CPU; CPU spans the node, as MC does, and adds nothing: both dropped.

#[test]
fn phoenix_2_6_27() {
    check("phoenix-2008", Era::V2_6_27, &[
        ("MC", "0-3", 4, "LOAD_BALANCE|BALANCE_NEWIDLE|BALANCE_EXEC|BALANCE_FORK|WAKE_AFFINE|SHARE_PKG_RESOURCES", 0x22f, (1, 4, 64, 125, 1, [2, 0, 0, 1, 1])),
        ("NODE", "0-15", 4, "LOAD_BALANCE|BALANCE_EXEC|BALANCE_FORK|WAKE_BALANCE|SERIALIZE", 0x44d, (8, 32, 32, 125, 2, [3, 2, 2, 1, 1])),
    ]);
}

#[test]
fn phoenix_2_6_28() {
    check("phoenix-2008", Era::V2_6_28, &[
        ("MC", "0-3", 4, "LOAD_BALANCE|BALANCE_EXEC|BALANCE_FORK|WAKE_AFFINE|WAKE_BALANCE|SHARE_PKG_RESOURCES", 0x26d, (1, 4, 64, 125, 1, [2, 0, 0, 1, 1])),
        ("NODE", "0-15", 4, "LOAD_BALANCE|BALANCE_EXEC|BALANCE_FORK|WAKE_AFFINE|WAKE_BALANCE|SERIALIZE", 0x46d, (8, 32, 32, 125, 2, [3, 2, 2, 1, 1])),
    ]);
}

#[test]
fn phoenix_4_15() {
    check("phoenix-2008", Era::V4_15, &[
        ("MC", "0-3", 4, "LOAD_BALANCE|BALANCE_NEWIDLE|BALANCE_EXEC|BALANCE_FORK|WAKE_AFFINE|SHARE_PKG_RESOURCES|PREFER_SIBLING", 0x122f, (4, 8, 32, 117, 1, [2, 0, 0, 0, 0])),
        ("NUMA", "0-15", 4, "LOAD_BALANCE|BALANCE_NEWIDLE|BALANCE_EXEC|BALANCE_FORK|WAKE_AFFINE|SERIALIZE|OVERLAP|NUMA", 0x642f, (16, 32, 32, 125, 2, [3, 2, 0, 0, 0])),
    ]);
}

#[test]
fn phoenix_6_5() {
    check("phoenix-2008", Era::V6_5, &[
        ("MC", "0-3", 4, "BALANCE_NEWIDLE|BALANCE_EXEC|BALANCE_FORK|WAKE_AFFINE|SHARE_PKG_RESOURCES|PREFER_SIBLING", 0x1217, (4, 8, 16, 117, 1, [0; 5])),
        ("NUMA", "0-15", 4, "BALANCE_NEWIDLE|BALANCE_EXEC|BALANCE_FORK|WAKE_AFFINE|SERIALIZE|OVERLAP|NUMA", 0x6417, (16, 32, 16, 117, 2, [0; 5])),
    ]);
}

// The 40-CPU Ivy Bridge-EP: siblings n and n + 20, one L3 and node per socket.

#[test]
fn ivb_2_6_27() {
    check("ivb-ep-2s", Era::V2_6_27, &[
        ("SIBLING", "0,20", 2, "LOAD_BALANCE|BALANCE_NEWIDLE|BALANCE_EXEC|BALANCE_FORK|WAKE_IDLE|WAKE_AFFINE|SHARE_CPUPOWER", 0xbf, (1, 2, 64, 110, 0, [0; 5])),
        ("MC", "0-9,20-29", 10, "LOAD_BALANCE|BALANCE_NEWIDLE|BALANCE_EXEC|BALANCE_FORK|WAKE_AFFINE|SHARE_PKG_RESOURCES", 0x22f, (1, 4, 64, 125, 1, [2, 0, 0, 1, 1])),
        ("NODE", "0-39", 2, "LOAD_BALANCE|BALANCE_EXEC|BALANCE_FORK|WAKE_BALANCE|SERIALIZE", 0x44d, (8, 32, 32, 125, 2, [3, 2, 2, 1, 1])),
    ]);
}

#[test]
fn ivb_2_6_28() {
    check("ivb-ep-2s", Era::V2_6_28, &[
        ("SIBLING", "0,20", 2, "LOAD_BALANCE|BALANCE_NEWIDLE|BALANCE_EXEC|BALANCE_FORK|WAKE_AFFINE|WAKE_BALANCE|SHARE_CPUPOWER", 0xef, (1, 2, 64, 110, 0, [0; 5])),
        ("MC", "0-9,20-29", 10, "LOAD_BALANCE|BALANCE_EXEC|BALANCE_FORK|WAKE_AFFINE|WAKE_BALANCE|SHARE_PKG_RESOURCES", 0x26d, (1, 4, 64, 125, 1, [2, 0, 0, 1, 1])),
        ("NODE", "0-39", 2, "LOAD_BALANCE|BALANCE_EXEC|BALANCE_FORK|WAKE_AFFINE|WAKE_BALANCE|SERIALIZE", 0x46d, (8, 32, 32, 125, 2, [3, 2, 2, 1, 1])),
    ]);
}

#[test]
fn ivb_4_15() {
    check("ivb-ep-2s", Era::V4_15, &[
        ("SMT", "0,20", 2, "LOAD_BALANCE|BALANCE_NEWIDLE|BALANCE_EXEC|BALANCE_FORK|WAKE_AFFINE|SHARE_CPUCAPACITY|SHARE_PKG_RESOURCES|PREFER_SIBLING", 0x12af, (2, 4, 32, 110, 0, [0; 5])),
        ("MC", "0-9,20-29", 10, "LOAD_BALANCE|BALANCE_NEWIDLE|BALANCE_EXEC|BALANCE_FORK|WAKE_AFFINE|SHARE_PKG_RESOURCES|PREFER_SIBLING", 0x122f, (20, 40, 32, 117, 1, [2, 0, 0, 0, 0])),
        ("NUMA", "0-39", 2, "LOAD_BALANCE|BALANCE_NEWIDLE|BALANCE_EXEC|BALANCE_FORK|WAKE_AFFINE|SERIALIZE|OVERLAP|NUMA", 0x642f, (40, 80, 32, 125, 2, [3, 2, 0, 0, 0])),
    ]);
}

#[test]
fn ivb_6_5() {
    check("ivb-ep-2s", Era::V6_5, &[
        ("SMT", "0,20", 2, "BALANCE_NEWIDLE|BALANCE_EXEC|BALANCE_FORK|WAKE_AFFINE|SHARE_CPUCAPACITY|SHARE_PKG_RESOURCES|PREFER_SIBLING", 0x1297, (2, 4, 16, 110, 0, [0; 5])),
        ("MC", "0-9,20-29", 10, "BALANCE_NEWIDLE|BALANCE_EXEC|BALANCE_FORK|WAKE_AFFINE|SHARE_PKG_RESOURCES|PREFER_SIBLING", 0x1217, (20, 40, 16, 117, 1, [0; 5])),
        ("NUMA", "0-39", 2, "BALANCE_NEWIDLE|BALANCE_EXEC|BALANCE_FORK|WAKE_AFFINE|SERIALIZE|OVERLAP|NUMA", 0x6417, (40, 80, 16, 117, 2, [0; 5])),
    ]);
}

/// Commit (A) on the 16-CPU box: every flag change it names shows up in the
/// difference between the 2.6.27 and 2.6.28 dumps, and nothing else does.
#[test]
fn retune_commit_is_the_difference_between_the_2_6_27_and_2_6_28_dumps() {
    let (_, old) = build("phoenix-2008", Era::V2_6_27);
    let (_, new) = build("phoenix-2008", Era::V2_6_28);
    let old_dump = old.dump_text(&(0..16).collect::<Vec<_>>());
    let new_dump = new.dump_text(&(0..16).collect::<Vec<_>>());
    let changed: Vec<(&str, &str)> = old_dump
        .lines()
        .zip(new_dump.lines())
        .filter(|(a, b)| a != b)
        .collect();
    // Two changed lines per CPU: MC's flags and NODE's flags; spans, groups and
    // parameters are identical.
    assert_eq!(changed.len(), 32, "{changed:#?}");
    for (a, b) in &changed {
        assert!(a.trim_start().starts_with("flags") && b.trim_start().starts_with("flags"));
    }
    let flag_diff = |level: &str| {
        let names = |d: &Domains| d.of(0).find(|x| x.level == level).unwrap().params.flags;
        let (o, n) = (names(&old), names(&new));
        let era_names = |f: schedlab::policy::SdFlags, era| {
            f.names(era)
                .into_iter()
                .map(String::from)
                .collect::<Vec<_>>()
        };
        let on: Vec<String> = era_names(n.without(o), Era::V2_6_28);
        let off: Vec<String> = era_names(o.without(n), Era::V2_6_27);
        (on, off)
    };
    // SMP (MC): NEWIDLE off, WAKE_BALANCE on.
    assert_eq!(
        flag_diff("MC"),
        (vec!["WAKE_BALANCE".into()], vec!["BALANCE_NEWIDLE".into()])
    );
    // NUMA (NODE): WAKE_AFFINE on. NEWIDLE was already off on x86-64's NODE
    // in the 2.6.27 tree (the reference notes it), so it cannot change here.
    assert_eq!(flag_diff("NODE"), (vec!["WAKE_AFFINE".into()], vec![]));
    // The CPU level's own NEWIDLE-off / WAKE_BALANCE-on is real but invisible:
    // on this box CPU spans the same 4 CPUs as MC and is dropped as degenerate.
    assert!(!new.level_names().contains(&"CPU"));
}

#[test]
fn a_4_node_slit_gives_two_numa_levels_with_overlapping_groups() {
    let mut spec = preset("phoenix-2008").unwrap();
    // A ring: each node is 16 from two neighbours and 22 from the opposite one.
    spec.distances = Some(vec![
        vec![10, 16, 22, 16],
        vec![16, 10, 16, 22],
        vec![22, 16, 10, 16],
        vec![16, 22, 16, 10],
    ]);
    let topo = Topology::from_spec(&spec).unwrap();
    let policy = PolicySpec::era(Era::V6_5).resolve(16).unwrap();
    let d = Domains::build(&topo, &policy).unwrap();
    let levels: Vec<_> = d
        .of(0)
        .map(|d| (d.level, d.span.to_list_string(), d.numa_distance))
        .collect();
    assert_eq!(
        levels,
        vec![
            ("MC", "0-3".to_string(), None),
            ("NUMA", "0-7,12-15".to_string(), Some(16)),
            ("NUMA2", "0-15".to_string(), Some(22)),
        ]
    );
    // NUMA2's groups are the NUMA spans of CPU 0 (nodes 3, 0, 1) and of the first
    // CPU not yet covered, 8 (nodes 1, 2, 3): they overlap.
    let numa2 = d.of(0).last().unwrap();
    let g: Vec<String> = numa2.groups.iter().map(|g| g.to_list_string()).collect();
    assert_eq!(g, vec!["0-7,12-15", "4-15"]);
}

#[test]
fn epyc_6_5_has_smt_ccx_package_and_numa() {
    let (_, d) = build("epyc-2s", Era::V6_5);
    let levels: Vec<_> = d
        .of(0)
        .map(|d| (d.level, d.span.len(), d.groups.len()))
        .collect();
    assert_eq!(
        levels,
        vec![
            ("SMT", 2, 2),
            ("MC", 16, 8),
            ("DIE", 128, 8),
            ("NUMA", 256, 2)
        ]
    );
}

#[test]
fn policy_changes_apply_and_bad_levels_are_reported() {
    let topo = Topology::from_spec(&preset("phoenix-2008").unwrap()).unwrap();
    let spec: PolicySpec = serde_json::from_str(
        r#"{"era":"2.6.27","levels":{"NODE":{"flags":{"WAKE_AFFINE":true,"BALANCE_NEWIDLE":true},"params":{"imbalance_pct":110}}}}"#,
    )
    .unwrap();
    let d = Domains::build(&topo, &spec.resolve(16).unwrap()).unwrap();
    let node = d.of(5).last().unwrap();
    assert_eq!(node.level, "NODE");
    assert_eq!(
        node.params.flags.names(Era::V2_6_27).join("|"),
        "LOAD_BALANCE|BALANCE_NEWIDLE|BALANCE_EXEC|BALANCE_FORK|WAKE_AFFINE|WAKE_BALANCE|SERIALIZE"
    );
    assert_eq!(node.params.imbalance_pct, 110);

    // SIBLING exists in 2.6.27 but this box has no SMT: say so.
    let spec: PolicySpec = serde_json::from_str(
        r#"{"era":"2.6.27","levels":{"SIBLING":{"flags":{"WAKE_IDLE":false}}}}"#,
    )
    .unwrap();
    let err = Domains::build(&topo, &spec.resolve(16).unwrap())
        .unwrap_err()
        .to_string();
    assert_eq!(err, "the policy changes level SIBLING, but era 2.6.27 on machine phoenix-2008 has no SIBLING domain (its levels: MC, NODE)");

    let spec: PolicySpec =
        serde_json::from_str(r#"{"era":"6.5","levels":{"MC":{"params":{"imbalance_pct":99}}}}"#)
            .unwrap();
    let err = Domains::build(&topo, &spec.resolve(16).unwrap())
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "level MC parameter imbalance_pct is 99; it must be 100..=1000"
    );
}

#[test]
fn every_cpu_lies_in_its_own_domains_and_groups_cover_the_span() {
    for machine in schedlab::topology::PRESETS {
        for era in Era::ALL {
            let (topo, d) = build(machine, era);
            for cpu in 0..topo.ncpus() {
                let mut prev_span = schedlab::cpuset::CpuSet::single(cpu);
                for dom in d.of(cpu) {
                    assert!(
                        dom.span.contains(cpu),
                        "{machine} {era} cpu{cpu} {}",
                        dom.level
                    );
                    assert!(
                        prev_span.is_subset(&dom.span) && prev_span != dom.span,
                        "{machine} {era} cpu{cpu} {}: spans must grow",
                        dom.level
                    );
                    let union = dom
                        .groups
                        .iter()
                        .fold(schedlab::cpuset::CpuSet::new(), |a, g| a.union(g));
                    assert_eq!(union, dom.span);
                    assert!(dom.group_of(cpu).is_some());
                    prev_span = dom.span;
                }
            }
        }
    }
}
