// Sample for the TypeScript outline.
export interface Shape {
  area(): number;
  name: string;
}

export type ID = string | number;

enum Color {
  Red,
  Green,
}

export abstract class Base<T> implements Shape {
  private items: T[] = [];

  constructor(public name: string) {}

  area(): number {
    return 0;
  }

  abstract describe(): string;
}

export function make<T>(x: T): T {
  return x;
}

export const handler = async (req: Request): Promise<void> => {
  const local = () => 1;
};

namespace Geometry {
  export function origin(): number {
    return 0;
  }
}

declare function external(x: number): void;
