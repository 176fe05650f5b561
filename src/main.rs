fn main() {
    println!("diagraph");
}
