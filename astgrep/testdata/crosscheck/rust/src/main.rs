use std::env;
use std::process;

mod lib;

fn run(args: &[String]) -> Result<(), String> {
    let path = args.get(1).ok_or("usage: app CONFIG")?;
    let cfg = lib::Config::load(path).map_err(|e| e.to_string())?;
    let name = cfg.get_or("name", "app");
    println!("{} on port {}", name, cfg.port());
    if let Some(debug) = cfg.get("debug") {
        eprintln!("debug = {}", debug);
    }
    Ok(())
}

fn main() {
    let args: Vec<String> = env::args().collect();
    match run(&args) {
        Ok(()) => {}
        Err(e) => {
            eprintln!("error: {}", e);
            process::exit(1);
        }
    }
    let v = vec![1, 2, 3];
    let total: i32 = v.iter().map(|x| x * 2).sum();
    println!("{}", total);
    let s = Some(total).unwrap();
    let _ = s;
}
