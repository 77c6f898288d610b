/*
 * replay.c: a main() for a fuzz harness without libFuzzer: it calls the
 * harness's LLVMFuzzerTestOneInput once for every file in the directories (or
 * files) it is given, each in an exactly-sized heap copy as libFuzzer passes
 * it. Built with gcc and ASan+UBSan, it turns the committed corpora into
 * regression tests for make test (tests/fuzz/fuzz.mk), with no clang needed.
 *
 * Without arguments it replays tests/fuzz/corpus/NAME and
 * tests/fuzz/regress/NAME (NAME compiled in as REPLAY_NAME), relative to the
 * repository root where make runs it. A directory that does not exist is
 * skipped (a harness may have no regressions yet), but finding no file at all
 * fails: a wrong path must not pass as "nothing crashed". Files whose names
 * start with "." or "README" are not inputs.
 *
 * A crash (a sanitizer report, abort(), a fault) ends the process with a
 * non-zero status, after naming the file that caused it.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sanitizer/common_interface_defs.h>

#ifndef REPLAY_NAME
#error "build with -DREPLAY_NAME='\"harness\"'"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *current; /* the file being replayed, for the crash message */

static void say_which(void)
{
	if (current)
		fprintf(stderr, "replay_%s: crashed on %s\n", REPLAY_NAME, current);
}

/* abort() (harness checks, panic, lwIP's assertions). Faults are left to
 * the sanitizer, which reports them and calls say_which. */
static void on_signal(int sig)
{
	say_which();
	signal(sig, SIG_DFL);
	raise(sig);
}

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "replay_%s: %s: %s\n", REPLAY_NAME, path, strerror(errno));
		return -1;
	}
	size_t cap = 4096, n = 0;
	uint8_t *buf = malloc(cap);
	size_t got;
	while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap)
			buf = realloc(buf, cap *= 2);
	}
	fclose(f);
	if (!buf) {
		fprintf(stderr, "replay_%s: out of memory\n", REPLAY_NAME);
		return -1;
	}
	/* Exactly n bytes, so a read past the input is caught. */
	uint8_t *data = malloc(n ? n : 1);
	memcpy(data, buf, n);
	free(buf);
	current = path;
	LLVMFuzzerTestOneInput(data, n);
	current = NULL;
	free(data);
	return 0;
}

static int is_input_name(const struct dirent *e)
{
	return e->d_name[0] != '.' && strncmp(e->d_name, "README", 6) != 0;
}

/* Replays path (a file, or every file in a directory, in name order); the
 * number of files, or -1 on an error. */
static int replay_path(const char *path)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return replay_file(path) < 0 ? -1 : 1;
	struct dirent **names;
	int n = scandir(path, &names, is_input_name, alphasort);
	if (n < 0)
		return -1;
	int count = 0;
	for (int i = 0; i < n; i++) {
		char file[4096];
		snprintf(file, sizeof file, "%s/%s", path, names[i]->d_name);
		if (stat(file, &st) == 0 && S_ISREG(st.st_mode)) {
			if (replay_file(file) < 0)
				count = -1;
			else if (count >= 0)
				count++;
		}
		free(names[i]);
	}
	free(names);
	return count;
}

int main(int argc, char **argv)
{
	const char *defaults[] = { "tests/fuzz/corpus/" REPLAY_NAME, "tests/fuzz/regress/" REPLAY_NAME };
	const char **paths = argc > 1 ? (const char **)argv + 1 : defaults;
	int npaths = argc > 1 ? argc - 1 : 2;
	__sanitizer_set_death_callback(say_which);
	signal(SIGABRT, on_signal);
	int total = 0;
	for (int i = 0; i < npaths; i++) {
		int n = replay_path(paths[i]);
		if (n < 0) {
			fprintf(stderr, "replay_%s: cannot read %s\n", REPLAY_NAME, paths[i]);
			return 1;
		}
		total += n;
	}
	if (total == 0) {
		fprintf(stderr, "replay_%s: no input files found\n", REPLAY_NAME);
		return 1;
	}
	printf("replay_%s: %d inputs, no crash\n", REPLAY_NAME, total);
	return 0;
}
