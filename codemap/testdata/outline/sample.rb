# Sample for the Ruby outline.
require "json"

VERSION = "1.0"

module Zoo
  class Animal
    attr_reader :name

    def initialize(name)
      @name = name
    end

    def speak
      "..."
    end

    def self.create(name)
      new(name)
    end

    class << self
      def registry
        @registry ||= []
      end
    end
  end

  class Dog < Animal
    def speak
      "woof"
    end
  end
end

def top_level(x)
  x * 2
end
