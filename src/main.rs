//! The `gpumeter` binary: argument parsing and exit codes at the edge; everything else is in
//! the library.

fn main() {
    println!("gpumeter: under construction");
}
