// Sample for the Java outline.
package sample;

import java.util.List;

public class Outer {
    private static final int LIMIT = 3;

    public Outer() {}

    public int size(List<String> items) {
        return items.size();
    }

    static class Nested {
        void run() {
            Runnable r = () -> {};
        }
    }

    interface Listener {
        void onEvent(String name);
    }

    enum Mode {
        ON, OFF;

        boolean active() {
            return this == ON;
        }
    }
}

record Pair(int a, int b) {
    int sum() {
        return a + b;
    }
}

@interface Marker {}
