// Sample for the JavaScript outline.
import fs from "fs";

export const VERSION = "1.0";
let counter = 0;

export function greet(name) {
  function inner() {
    return name;
  }
  return inner();
}

const add = (a, b) => a + b;
const mul = function (a, b) {
  return a * b;
};

class Animal extends Base {
  constructor(name) {
    super();
    this.name = name;
  }

  speak() {
    return `${this.name} speaks`;
  }

  static create() {
    return new Animal("x");
  }

  get label() {
    return this.name;
  }
}

export default class {
  run() {}
}

async function* stream() {
  yield 1;
}

module.exports = { greet, add };
