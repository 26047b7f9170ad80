//! Every error a user can cause says what is wrong, where, and what would
//! be valid, in words: a corpus of broken experiments, links, `lscpu -p`
//! pastes and machine files, each message held to the same rules.

use schedlab::codec;
use schedlab::experiment::Experiment;
use schedlab::presets;
use schedlab::topology;

/// Words that belong to Rust or serde, not to the user.
const JARGON: [&str; 18] = [
    "`",
    "variant of",
    "unknown variant",
    "enum ",
    "struct ",
    "untagged",
    "Decompress",
    "TINFL",
    "Status",
    "Some(",
    "None",
    "Error {",
    "u32",
    "u64",
    "usize",
    "f64",
    "i64",
    "identifier",
];

fn check(input: &str, msg: &str, place: &[&str]) {
    println!("{input:?}\n    {msg}");
    for j in JARGON {
        assert!(
            !msg.contains(j),
            "{input:?} gives {msg:?}, which says {j:?}"
        );
    }
    assert!(msg.len() >= 20, "{input:?} gives a terse {msg:?}");
    assert!(msg.len() <= 700, "{input:?} gives a long {msg:?}");
    assert!(
        place.iter().any(|p| msg.contains(p)),
        "{input:?} gives {msg:?}, which does not say where (one of {place:?})"
    );
    if msg.contains("unknown ") {
        assert!(
            ["valid", "there are no", "knows", "one of"]
                .iter()
                .any(|w| msg.contains(w)),
            "{input:?} gives {msg:?}, which names no valid choice"
        );
    }
}

/// A preset's JSON with `edit` applied to it as a JSON value.
fn broken(edit: impl FnOnce(&mut serde_json::Value)) -> String {
    let exp = presets::get("waweight-tbench").unwrap();
    let mut v = serde_json::to_value(&exp).unwrap();
    edit(&mut v);
    serde_json::to_string_pretty(&v).unwrap()
}

fn custom_machine(v: &mut serde_json::Value) {
    let spec = topology::preset("kvm-2vcpu").unwrap();
    v["machine"] = serde_json::to_value(spec).unwrap();
}

#[test]
fn broken_experiments_are_told_in_words() {
    type Edit = Box<dyn Fn(&mut serde_json::Value)>;
    let cases: Vec<(&str, Edit, &str)> = vec![
        // A mistyped field name in each object.
        ("top", Box::new(|v| v["nmae"] = "x".into()), "nmae"),
        (
            "policy",
            Box::new(|v| v["policy"]["eraa"] = "4.15".into()),
            "eraa",
        ),
        (
            "variant",
            Box::new(|v| v["variants"][0]["lable"] = "A".into()),
            "lable",
        ),
        (
            "workload",
            Box::new(|v| v["workload"]["clientz"] = 3.into()),
            "clientz",
        ),
        (
            "sweep",
            Box::new(|v| v["sweep"]["parm"] = "x".into()),
            "parm",
        ),
        (
            "machine",
            Box::new(|v| {
                custom_machine(v);
                v["machine"]["layoutt"] = 1.into();
            }),
            "layoutt",
        ),
        (
            "shape",
            Box::new(|v| {
                custom_machine(v);
                v["machine"]["layout"]["shape"]["nodez"] = 1.into();
            }),
            "nodez",
        ),
        (
            "costs",
            Box::new(|v| {
                custom_machine(v);
                v["machine"]["costs"]["ipi"] = 1.into();
            }),
            "ipi",
        ),
        (
            "layout",
            Box::new(|v| {
                custom_machine(v);
                v["machine"]["layout"] = serde_json::json!({"grid": {}});
            }),
            "grid",
        ),
        // Wrong types and values.
        (
            "repeats",
            Box::new(|v| v["repeats"] = "two".into()),
            "repeats",
        ),
        ("seed", Box::new(|v| v["seed"] = (-1).into()), "seed"),
        (
            "clients",
            Box::new(|v| v["workload"]["clients"] = "8".into()),
            "8",
        ),
        (
            "machine number",
            Box::new(|v| v["machine"] = 5.into()),
            "machine",
        ),
        (
            "machine list",
            Box::new(|v| v["machine"] = serde_json::json!([])),
            "machine",
        ),
        (
            "variants object",
            Box::new(|v| v["variants"] = serde_json::json!({})),
            "variants",
        ),
        (
            "sweep values",
            Box::new(|v| v["sweep"]["values"] = 3.into()),
            "values",
        ),
        (
            "era",
            Box::new(|v| v["policy"]["era"] = "2.6.99".into()),
            "2.6.99",
        ),
        (
            "kind",
            Box::new(|v| v["workload"]["kind"] = "tbenchh".into()),
            "tbenchh",
        ),
        (
            "no kind",
            Box::new(|v| {
                v["workload"].as_object_mut().unwrap().remove("kind");
            }),
            "kind",
        ),
        (
            "no name",
            Box::new(|v| {
                v.as_object_mut().unwrap().remove("name");
            }),
            "name",
        ),
        (
            "machine preset",
            Box::new(|v| v["machine"] = "ivb-ep-3s".into()),
            "ivb-ep-3s",
        ),
        (
            "flag",
            Box::new(|v| {
                v["variants"][1]["policy"] =
                    serde_json::json!({"levels": {"MC": {"WAKE_AFINE": true}}})
            }),
            "WAKE_AFINE",
        ),
        (
            "no variants",
            Box::new(|v| v["variants"] = serde_json::json!([])),
            "variant",
        ),
    ];
    for (name, edit, mentions) in cases {
        let text = broken(edit);
        let msg = Experiment::from_json(&text).expect_err(name).to_string();
        check(
            name,
            &msg,
            &[
                "line ",
                " at ",
                "variant ",
                "level",
                "policy",
                "machine",
                "experiment",
            ],
        );
        assert!(
            msg.contains(mentions),
            "{name}: {msg:?} does not mention {mentions:?}"
        );
    }
    // Text that is not JSON at all.
    let good = broken(|_| {});
    for (name, text) in [
        ("truncated", &good[..good.len() / 2]),
        ("trailing comma", "{\"version\": 1,}"),
        ("empty", ""),
        ("not JSON", "version: 1"),
        ("unquoted key", "{version: 1}"),
        ("misspelt true", "{\"version\": 1, \"sum_row\": tru}"),
        ("extra", &format!("{good} x")),
    ] {
        let msg = Experiment::from_json(text).expect_err(name).to_string();
        check(name, &msg, &["line "]);
    }
    // A feature given twice (JSON allows it; which one was meant is unknown).
    let with_feature = broken(|v| v["policy"]["features"] = serde_json::json!({"WA_WEIGHT": true}));
    let twice = with_feature.replacen(
        "\"WA_WEIGHT\": true",
        "\"WA_WEIGHT\": true, \"WA_WEIGHT\": false",
        1,
    );
    assert_ne!(twice, with_feature);
    let msg = Experiment::from_json(&twice)
        .expect_err("twice")
        .to_string();
    check("twice", &msg, &["policy.features"]);
    assert!(msg.contains("\"WA_WEIGHT\" is given twice"), "{msg}");
}

#[test]
fn broken_links_are_told_in_words() {
    let code = codec::encode(&presets::get("waweight-tbench").unwrap());
    let mut links: Vec<String> = vec![
        "#x=1.".into(),
        "#x=1.!!!!".into(),
        "#x=1.AB=".into(),
        "#x=2.abc".into(),
        "#x=abc".into(),
        "#preset=nope".into(),
        "#foo=bar".into(),
        "#%zz".into(),
        "#{\"version\":1,".into(),
        "#{\"version\":1,\"name\":\"x\",\"machine\":5}".into(),
    ];
    // Cut at every length from a few characters on, and with a character changed.
    for cut in (4..code.len()).step_by(7) {
        links.push(format!("#x={}", &code[..cut]));
    }
    let mut flipped = code.clone().into_bytes();
    let i = flipped.len() / 2;
    flipped[i] = if flipped[i] == b'A' { b'B' } else { b'A' };
    links.push(format!("#x={}", String::from_utf8(flipped).unwrap()));
    for link in links {
        let Err(e) = codec::parse_fragment(&link) else {
            continue; // a cut that still decodes (a later part was optional)
        };
        check(
            &link,
            &e.to_string(),
            &["link", "line ", "experiment", "preset", "at "],
        );
    }
}

#[test]
fn broken_lscpu_pastes_and_machine_files_are_told_in_words() {
    for text in [
        "",
        "a,b,c",
        "0",
        "# CPU,CORE,SOCKET\n0,x,0",
        "# CPU,Core,Socket,Node,,L1d,L1i,L2,L3\n0,0,0,0,,0,0,0,zz",
        "{",
        "{\"name\": \"m\"}",
        "{\"name\": \"m\", \"layout\": {\"shape\": {\"nodes\": 1}}, \"costs\": {}}",
        "{\"name\": \"m\", \"layout\": {\"cpus\": [{\"cpu\": \"0\"}]}}",
        "{\"name\": 3}",
    ] {
        let msg = topology::import_machine("pasted", text)
            .expect_err(text)
            .to_string();
        check(text, &msg, &["line ", "lscpu", "machine JSON"]);
    }
}
