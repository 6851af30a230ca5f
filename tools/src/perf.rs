fn main() { eprintln!("rnic-perf: not built yet"); std::process::exit(2); }
