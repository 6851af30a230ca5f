//! Simulator speed: runs an idle cluster and prints cycles per wall second.
//! `cargo run -p rnic-sim --release --example speed -- [nics] [cycles]`

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().map(|s| s.parse().expect("nics")).unwrap_or(2);
    let cycles: u64 = args.next().map(|s| s.parse().expect("cycles")).unwrap_or(200_000);
    let mut c = rnic_sim::Cluster::new(n, rnic_sim::SimConfig::default()).expect("cluster");
    c.run(cycles);
    println!("{}", c.stats());
}
