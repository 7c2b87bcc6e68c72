//! The `gpumeter` binary (placeholder until the sources and the dashboard are merged).

fn main() {
    println!("gpumeter: under construction");
}
