//! Sample for the Rust outline.
use std::fmt;

pub const MAX: usize = 16;
static GREETING: &str = "hi";

pub struct Point {
    x: i32,
    y: i32,
}

pub enum Shape {
    Circle(f64),
    Square(f64),
}

pub trait Area {
    fn area(&self) -> f64;
    fn describe(&self) -> String {
        String::from("shape")
    }
}

impl Area for Shape {
    fn area(&self) -> f64 {
        fn helper() -> f64 {
            1.0
        }
        helper()
    }
}

impl<T> Wrapper<T> {
    pub fn new(v: T) -> Self {
        Wrapper(v)
    }
}

type Result2 = Result<(), String>;

mod inner {
    pub fn nested() {}

    pub struct Hidden;
}

macro_rules! square {
    ($x:expr) => {
        $x * $x
    };
}

pub fn main() {
    println!("{}", square!(2));
}
