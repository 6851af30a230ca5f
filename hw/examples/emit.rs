//! Writes the Verilog of every top to `out/<name>.v` (or the directory given).
fn main() {
    let dir = std::env::args().nth(1).unwrap_or_else(|| "out".into());
    std::fs::create_dir_all(&dir).expect("create output directory");
    for (name, v) in rnic_hw::verilog_tops() {
        let p = format!("{dir}/{name}.v");
        std::fs::write(&p, v).expect("write verilog");
        println!("{p}");
    }
}
