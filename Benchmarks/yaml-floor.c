/* The floor under `jobgraph validate`: libyaml's event parser over a whole file, each event
 * discarded at once. jobgraph feeds libyaml the same way (the file in memory, through
 * yaml_parser_set_input_string), so the difference between the two is jobgraph's own work.
 *
 *   cc -O2 Benchmarks/yaml-floor.c -lyaml -o yaml-floor && ./yaml-floor pipeline.yaml
 *
 * validate.sh builds and times it beside each large file. Exits 1 on a YAML error. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s FILE\n", argv[0]);
        return 2;
    }
    int descriptor = open(argv[1], O_RDONLY);
    struct stat status;
    if (descriptor < 0 || fstat(descriptor, &status) != 0 || status.st_size == 0) {
        perror(argv[1]);
        return 2;
    }
    const unsigned char *bytes = mmap(NULL, (size_t)status.st_size, PROT_READ, MAP_PRIVATE, descriptor, 0);
    if (bytes == MAP_FAILED) {
        perror("mmap");
        return 2;
    }
    yaml_parser_t parser;
    yaml_event_t event;
    if (!yaml_parser_initialize(&parser)) return 2;
    yaml_parser_set_input_string(&parser, bytes, (size_t)status.st_size);
    long events = 0;
    for (;;) {
        if (!yaml_parser_parse(&parser, &event)) {
            fprintf(stderr, "%s: YAML error: %s\n", argv[1], parser.problem ? parser.problem : "unknown");
            return 1;
        }
        int done = event.type == YAML_STREAM_END_EVENT;
        yaml_event_delete(&event);
        events++;
        if (done) break;
    }
    yaml_parser_delete(&parser);
    printf("%ld events\n", events);
    return 0;
}
