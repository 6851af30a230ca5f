//! Writes the Verilog of every top to `out/<name>.v` (or the directory
//! given); with `--shell DIR`, only the board shell, `DIR/rnic_shell.v`.
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (shell, dir) = match args.as_slice() {
        [flag, dir] if flag == "--shell" => (true, dir.clone()),
        [dir] => (false, dir.clone()),
        [] => (false, "out".to_string()),
        _ => {
            eprintln!("usage: emit [DIR] | emit --shell DIR");
            std::process::exit(2);
        }
    };
    std::fs::create_dir_all(&dir).expect("create output directory");
    let tops = if shell { vec![rnic_hw::shell::board_verilog()] } else { rnic_hw::verilog_tops() };
    for (name, v) in tops {
        let p = format!("{dir}/{name}.v");
        std::fs::write(&p, v).expect("write verilog");
        println!("{p}");
    }
}
