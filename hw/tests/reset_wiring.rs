//! Every flip-flop of every emitted top is reset by its block's reset.
//!
//! A register whose reset input were tied off, or a rust-hdl `DFF` (no
//! reset) creeping back in, can hide from the end-to-end reset tests when
//! its stale value happens to heal (an FSM that drifts back to idle). This
//! check reads the Verilog that ships: every clocked process is a `Reg`
//! (`if (reset) q <= ...`), a `Table` (`if (clear) mem[...]`) or a RAM's
//! read/write of its memory array, and every `$reset` input is driven by
//! the parent's own `reset` (the core's engines by `eng_reset`, which is
//! `reset` or the table clear after it).

/// The statements of the clocked processes of `verilog`, one string per process.
fn clocked_bodies(verilog: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut lines = verilog.lines();
    while let Some(l) = lines.next() {
        if l.trim_start().starts_with("always @(posedge") {
            let body: Vec<&str> =
                lines.by_ref().map(str::trim).take_while(|t| *t != "end").filter(|t| !t.is_empty()).collect();
            out.push(body.join(" "));
        }
    }
    out
}

fn is_reg(body: &str) -> bool {
    body.starts_with("if (reset) q <= ") && body.ends_with("else q <= d;") && body.matches("<=").count() == 2
}

fn is_memory(body: &str) -> bool {
    body == "read_data <= mem[read_address];"
        || body == "if (write_enable) begin mem[write_address] <= write_data;"
        || body == "if (clear) mem[clear_address] <= 0; else if (write_enable) mem[write_address] <= write_data;"
}

/// Checks one top; the error names the first process or wire that breaks the rule.
fn check(name: &str, verilog: &str) -> Result<(), String> {
    let bodies = clocked_bodies(verilog);
    for b in &bodies {
        if !is_reg(b) && !is_memory(b) {
            return Err(format!("{name}: a clocked process that is neither a Reg nor a memory: {b}"));
        }
    }
    let regs = bodies.iter().filter(|b| is_reg(b)).count();
    let mut driven = 0;
    // Register names repeat across modules: look up each one's clock in its own module.
    for (module, line) in verilog.split("\nmodule ").flat_map(|m| m.lines().map(move |l| (m, l))) {
        let Some((lhs, rhs)) = line.trim().split_once(" = ") else { continue };
        if !lhs.ends_with("$reset") {
            continue;
        }
        let rhs = rhs.trim_end_matches(';');
        // Each register is reset by its own clock domain's reset (the
        // clock-crossing FIFO and the board shell have two domains).
        let reg = lhs.trim_end_matches("$reset");
        let clock = module.lines().find_map(|l| l.trim().strip_prefix(&format!("{reg}$clock = ")));
        let ok = match clock.map(|c| c.trim_end_matches(';')) {
            Some("wr_clock") => rhs == "wr_reset",
            Some("rd_clock") => rhs == "rd_reset",
            Some("mac_clock") => rhs == "mac_reset",
            _ => rhs == "reset" || ((name == "core" || name == "shell") && rhs == "eng_reset"),
        };
        if !ok {
            return Err(format!("{name}: {lhs} is driven by {rhs}, not by its block's reset"));
        }
        driven += 1;
    }
    if regs > 0 && driven == 0 {
        return Err(format!("{name}: {regs} registers but no reset wiring found"));
    }
    Ok(())
}

#[test]
fn every_register_of_every_top_is_reset() {
    for (name, verilog) in rnic_hw::verilog_tops() {
        check(&name, &verilog).unwrap_or_else(|e| panic!("{e}"));
    }
}

#[test]
fn the_check_finds_a_register_without_reset() {
    let (_, fence) = rnic_hw::verilog_tops().into_iter().find(|(n, _)| n == "fence").expect("the fence top");
    check("fence", &fence).unwrap();
    let tied = fence.replacen("state$reset = reset;", "state$reset = 1'b0;", 1);
    assert_ne!(tied, fence, "the fence's state register is wired as expected");
    assert!(check("fence", &tied).unwrap_err().contains("state$reset is driven by 1'b0"));
    let dff = fence.replacen("if (reset) q <= 4'h0;\n       else q <= d;", "q <= d;", 1);
    assert_ne!(dff, fence, "the fence has a 4-bit register");
    assert!(check("fence", &dff).unwrap_err().contains("neither a Reg nor a memory: q <= d;"));
    let (_, cdc) = rnic_hw::verilog_tops().into_iter().find(|(n, _)| n == "cdc_fifo").expect("the cdc_fifo top");
    check("cdc_fifo", &cdc).unwrap();
    let crossed = cdc.replacen("rd_ptr$reset = rd_reset;", "rd_ptr$reset = wr_reset;", 1);
    assert_ne!(crossed, cdc, "the read pointer's reset is wired as expected");
    assert!(check("cdc_fifo", &crossed).unwrap_err().contains("rd_ptr$reset is driven by wr_reset"));
}
