/* Sample for a C++ header outline: prototypes are listed here. */
#ifndef SAMPLE_H
#define SAMPLE_H

#define NODE_MAX 64

typedef struct node node_t;

struct node {
    int value;
    struct node *next;
};

extern "C" {
int node_count(const node_t *head);
void node_free(node_t *head);
extern int node_debug;
}

class Registry {
public:
    Registry();
    static Registry &instance();
    void add(node_t *n);

private:
    int (*hook)(int);
};

template <typename T>
T clamp(T v, T lo, T hi);

#endif
