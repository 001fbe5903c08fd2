fn main() {
    let mut by = std::collections::BTreeMap::new();
    let mut first = std::collections::BTreeMap::new();
    for seed in 0..1000 {
        let run = sim::run(&sim::generate(seed, None)).unwrap();
        for v in &run.violations {
            *by.entry(v.invariant.name()).or_insert(0) += 1;
            first
                .entry(v.invariant.name())
                .or_insert_with(Vec::new)
                .push((seed, v.to_string()));
        }
    }
    println!("{by:?}");
    for (k, v) in first {
        for x in v.iter().take(4) {
            println!("{k}: {x:?}");
        }
    }
}
