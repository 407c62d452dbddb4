// Sample for the C# outline.
using System;

namespace Sample.App
{
    public interface IShape
    {
        double Area();
    }

    public struct Point
    {
        public int X;
    }

    public enum Color { Red, Green }

    public delegate void Handler(string name);

    public class Circle : IShape
    {
        private const double Pi = 3.14;

        public Circle(double r) { R = r; }

        public double R { get; set; }

        public double Area()
        {
            return Pi * R * R;
        }

        private class Cache
        {
            void Clear() { }
        }
    }

    public record Person(string Name);
}
