package tsnative

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <stdio.h>
#include <sys/mman.h>

// The few tree-sitter runtime declarations we need. The runtime itself is
// compiled into github.com/smacker/go-tree-sitter, which grammars.go imports,
// so these symbols resolve at link time. Layouts follow tree-sitter's api.h
// (ABI 14), the version that module vendors.
typedef uint16_t TSSymbol;
typedef struct TSLanguage TSLanguage;
typedef struct TSParser TSParser;
typedef struct TSTree TSTree;
typedef struct { uint32_t context[4]; const void *id; const TSTree *tree; } TSNode;
typedef struct { const void *tree; const void *id; uint32_t context[3]; } TSTreeCursor;

extern TSParser *ts_parser_new(void);
extern void ts_parser_delete(TSParser *);
extern bool ts_parser_set_language(TSParser *, const TSLanguage *);
extern TSTree *ts_parser_parse_string(TSParser *, const TSTree *, const char *, uint32_t);
extern void ts_parser_set_timeout_micros(TSParser *, uint64_t);
extern void ts_parser_set_cancellation_flag(TSParser *, const size_t *);
extern TSNode ts_tree_root_node(const TSTree *);
extern uint32_t ts_node_descendant_count(TSNode);
extern TSSymbol ts_node_symbol(TSNode);
extern uint32_t ts_node_start_byte(TSNode);
extern uint32_t ts_node_end_byte(TSNode);
extern bool ts_node_is_named(TSNode);
extern bool ts_node_is_extra(TSNode);
extern bool ts_node_is_missing(TSNode);
extern bool ts_node_has_error(TSNode);
extern TSTreeCursor ts_tree_cursor_new(TSNode);
extern void ts_tree_cursor_delete(TSTreeCursor *);
extern TSNode ts_tree_cursor_current_node(const TSTreeCursor *);
extern uint16_t ts_tree_cursor_current_field_id(const TSTreeCursor *);
extern uint32_t ts_language_field_count(const TSLanguage *);
extern const char *ts_language_field_name_for_id(const TSLanguage *, uint16_t);
extern bool ts_tree_cursor_goto_first_child(TSTreeCursor *);
extern bool ts_tree_cursor_goto_next_sibling(TSTreeCursor *);
extern bool ts_tree_cursor_goto_parent(TSTreeCursor *);
extern uint32_t ts_language_version(const TSLanguage *);
extern uint32_t ts_language_symbol_count(const TSLanguage *);
extern uint32_t ts_language_state_count(const TSLanguage *);
extern uint16_t ts_language_next_state(const TSLanguage *, uint16_t, TSSymbol);
extern const char *ts_language_symbol_name(const TSLanguage *, TSSymbol);
extern int ts_language_symbol_type(const TSLanguage *, TSSymbol);

// Grammars bundled by go-tree-sitter's subpackages (imported in grammars.go).
extern const TSLanguage *tree_sitter_bash(void);
extern const TSLanguage *tree_sitter_c(void);
extern const TSLanguage *tree_sitter_cpp(void);
extern const TSLanguage *tree_sitter_c_sharp(void);
extern const TSLanguage *tree_sitter_css(void);
extern const TSLanguage *tree_sitter_elixir(void);
extern const TSLanguage *tree_sitter_go(void);
extern const TSLanguage *tree_sitter_hcl(void);
extern const TSLanguage *tree_sitter_html(void);
extern const TSLanguage *tree_sitter_java(void);
extern const TSLanguage *tree_sitter_javascript(void);
extern const TSLanguage *tree_sitter_kotlin(void);
extern const TSLanguage *tree_sitter_lua(void);
extern const TSLanguage *tree_sitter_php(void);
extern const TSLanguage *tree_sitter_python(void);
extern const TSLanguage *tree_sitter_ruby(void);
extern const TSLanguage *tree_sitter_rust(void);
extern const TSLanguage *tree_sitter_scala(void);
extern const TSLanguage *tree_sitter_swift(void);
extern const TSLanguage *tree_sitter_toml(void);
extern const TSLanguage *tree_sitter_tsx(void);
extern const TSLanguage *tree_sitter_typescript(void);
extern const TSLanguage *tree_sitter_yaml(void);

// One record per node, in preorder. A node's children are the records
// from i+1 up to (not including) last, visited by jumping from one child's
// last to the next. No pointers, so Go memory can be handed to C.
typedef struct {
	uint32_t start;
	uint32_t end;
	uint32_t last;
	uint16_t sym;
	uint8_t flags;
	uint8_t field; // the field the node is its parent's child by; 0 none, 255 one past 254
} bt_node;

enum { BT_NAMED = 1, BT_EXTRA = 2, BT_ERROR = 4, BT_MISSING = 8 };

extern void ts_set_allocator(void *(*)(size_t), void *(*)(size_t, size_t), void *(*)(void *, size_t), void (*)(void *));

// ---- A memory pool per parse ----
//
// tree-sitter allocates and frees every node of a tree one by one. During
// one of our parses, its allocations come from the work slot's pool instead
// (bump allocation, with free lists for small sizes), and the whole tree,
// parser included, is dropped at once afterwards by resetting the pool.
// Outside a pool window (any other tree-sitter use in the process) the
// allocator hooks fall through to malloc and free.

#define BT_SMALL 1024 // blocks up to this size come in 16-byte classes
#define BT_CLASSES (BT_SMALL / 16 + 1)
// Larger blocks are rounded up to a power of two and recycled too:
// tree-sitter's error recovery copies a growing child array on every
// skipped token, and without reuse a parse kept every copy (hundreds of MB
// for a few thousand tokens in one ERROR node).
#define BT_LARGE_CLASSES 48

typedef struct bt_chunk {
	struct bt_chunk *next;
	size_t used, cap;
	size_t maplen;
	char *base;
} bt_chunk;

typedef struct {
	size_t size; // usable bytes
	size_t pad;
} bt_hdr;

typedef struct bt_pool {
	bt_chunk *chunks; // newest first
	bt_chunk *spare;  // empty chunks kept for the next parses
	size_t chunk_size;
	void *free_lists[BT_CLASSES];
	void *large_lists[BT_LARGE_CLASSES]; // by log2 of the block size
} bt_pool;

static __thread bt_pool *bt_cur;

// bt_mapped counts the bytes of pool chunks mapped by every pool: all the
// C memory this package's parses hold.
static size_t bt_mapped;

static size_t bt_mapped_bytes(void) { return __atomic_load_n(&bt_mapped, __ATOMIC_RELAXED); }

#define BT_CHUNK_MIN (1u << 20)
#define BT_HUGE_CHUNK (4u << 20)
#define BT_CHUNK_MAX (64u << 20)

// A pool keeps one empty chunk of at most BT_RETAIN_ONE bytes after a
// parse, and more chunks of up to BT_RETAIN_CHUNK bytes while all pools
// together keep less than BT_RETAIN_MAX, so a parse that needs a few MiB
// does not fault fresh pages in every time; the rest goes back to the
// system at once.
#define BT_RETAIN_ONE (4u << 20)
#define BT_RETAIN_CHUNK (16u << 20)
#define BT_RETAIN_MAX (32u << 20)
static size_t bt_retained;

static void bt_oom(size_t n) {
	fprintf(stderr, "astgrep: out of memory allocating %zu bytes\n", n);
	abort();
}

// Chunks are mapped and unmapped directly rather than taken from malloc:
// parses run on whichever thread the Go scheduler picks, and malloc would
// keep the freed chunks of each thread's arena instead of handing them
// back to the system.
static bt_chunk *bt_chunk_new(size_t cap) {
	size_t len = (sizeof(bt_chunk) + cap + 4095) & ~(size_t)4095;
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) bt_oom(len);
	// A big parse faults in tens of MiB: in huge pages, 512 times fewer
	// faults (where the system gives them on request).
	if (len >= BT_HUGE_CHUNK) madvise(m, len, MADV_HUGEPAGE);
	bt_chunk *c = m;
	c->base = (char *)(c + 1);
	c->used = 0;
	c->cap = cap;
	c->maplen = len;
	c->next = NULL;
	__atomic_add_fetch(&bt_mapped, len, __ATOMIC_RELAXED);
	return c;
}

static void bt_chunk_free(bt_chunk *c) {
	__atomic_sub_fetch(&bt_mapped, c->maplen, __ATOMIC_RELAXED);
	munmap(c, c->maplen);
}

static int bt_owns(bt_pool *p, void *ptr) {
	for (bt_chunk *c = p->chunks; c; c = c->next) {
		if ((char *)ptr > c->base && (char *)ptr < c->base + c->used) return 1;
	}
	return 0;
}

// bt_large_class returns the log2 of the power of two that holds size
// (> BT_SMALL), or -1 when there is none below 2^BT_LARGE_CLASSES.
static int bt_large_class(size_t size) {
	int k = 11; // 2048 > BT_SMALL
	while (k < BT_LARGE_CLASSES && ((size_t)1 << k) < size) k++;
	return k < BT_LARGE_CLASSES ? k : -1;
}

static void *bt_pool_alloc(bt_pool *p, size_t size) {
	size_t usable = (size + 15) & ~(size_t)15;
	if (usable == 0) usable = 16;
	if (usable <= BT_SMALL) {
		size_t cls = usable / 16;
		void *b = p->free_lists[cls];
		if (b) {
			p->free_lists[cls] = *(void **)b;
			return b;
		}
	} else {
		int k = bt_large_class(usable);
		if (k >= 0) {
			usable = (size_t)1 << k;
			void *b = p->large_lists[k];
			if (b) {
				p->large_lists[k] = *(void **)b;
				return b;
			}
		}
	}
	size_t need = usable + sizeof(bt_hdr);
	bt_chunk *c = p->chunks;
	if (c == NULL || c->cap - c->used < need) {
		bt_chunk **sp = &p->spare;
		while (*sp && (*sp)->cap < need) sp = &(*sp)->next;
		if (*sp) {
			c = *sp;
			*sp = c->next;
			__atomic_sub_fetch(&bt_retained, c->maplen, __ATOMIC_RELAXED);
		} else {
			size_t cap = p->chunk_size;
			if (cap < need) cap = need;
			c = bt_chunk_new(cap);
		}
		c->next = p->chunks;
		p->chunks = c;
	}
	bt_hdr *h = (bt_hdr *)(c->base + c->used);
	c->used += need;
	h->size = usable;
	return h + 1;
}

static void bt_pool_free(bt_pool *p, void *ptr) {
	bt_hdr *h = (bt_hdr *)ptr - 1;
	if (h->size <= BT_SMALL) {
		size_t cls = h->size / 16;
		*(void **)ptr = p->free_lists[cls];
		p->free_lists[cls] = ptr;
		return;
	}
	int k = bt_large_class(h->size);
	if (k >= 0 && ((size_t)1 << k) == h->size) {
		*(void **)ptr = p->large_lists[k];
		p->large_lists[k] = ptr;
	}
}

static void *bt_malloc(size_t size) {
	if (bt_cur) return bt_pool_alloc(bt_cur, size);
	void *r = malloc(size);
	if (size > 0 && r == NULL) bt_oom(size);
	return r;
}

static void *bt_calloc(size_t n, size_t size) {
	if (bt_cur) {
		void *r = bt_pool_alloc(bt_cur, n * size);
		memset(r, 0, n * size);
		return r;
	}
	void *r = calloc(n, size);
	if (n > 0 && size > 0 && r == NULL) bt_oom(n * size);
	return r;
}

static void bt_free(void *ptr) {
	if (ptr == NULL) return;
	if (bt_cur && bt_owns(bt_cur, ptr)) {
		bt_pool_free(bt_cur, ptr);
		return;
	}
	free(ptr);
}

static void *bt_realloc(void *ptr, size_t size) {
	if (ptr == NULL) return bt_malloc(size);
	if (bt_cur && bt_owns(bt_cur, ptr)) {
		bt_hdr *h = (bt_hdr *)ptr - 1;
		if (size <= h->size) return ptr;
		void *r = bt_pool_alloc(bt_cur, size);
		memcpy(r, ptr, h->size);
		bt_pool_free(bt_cur, ptr);
		return r;
	}
	void *r = realloc(ptr, size);
	if (size > 0 && r == NULL) bt_oom(size);
	return r;
}

static void bt_install_allocator(void) {
	ts_set_allocator(bt_malloc, bt_calloc, bt_realloc, bt_free);
}

static bt_pool *bt_pool_new(void) {
	bt_pool *p = calloc(1, sizeof(bt_pool));
	if (p == NULL) bt_oom(sizeof(bt_pool));
	return p;
}

// bt_pool_reset drops everything allocated from the pool, keeping empty
// chunks for the next parses (see BT_RETAIN_ONE).
static void bt_pool_reset(bt_pool *p) {
	bt_chunk *c = p->chunks;
	while (c) {
		bt_chunk *next = c->next;
		if ((c->cap <= BT_RETAIN_ONE && p->spare == NULL) ||
		    (c->cap <= BT_RETAIN_CHUNK && __atomic_load_n(&bt_retained, __ATOMIC_RELAXED) + c->maplen <= BT_RETAIN_MAX)) {
			c->used = 0;
			c->next = p->spare;
			p->spare = c;
			__atomic_add_fetch(&bt_retained, c->maplen, __ATOMIC_RELAXED);
		} else {
			bt_chunk_free(c);
		}
		c = next;
	}
	p->chunks = NULL;
	memset(p->free_lists, 0, sizeof(p->free_lists));
	memset(p->large_lists, 0, sizeof(p->large_lists));
}

static void bt_pool_delete(bt_pool *p) {
	bt_pool_reset(p);
	while (p->spare) {
		bt_chunk *c = p->spare;
		p->spare = c->next;
		__atomic_sub_fetch(&bt_retained, c->maplen, __ATOMIC_RELAXED);
		bt_chunk_free(c);
	}
	free(p);
}

// bt_parse parses src with a parser made for this parse inside pool. The
// tree and parser live in the pool until bt_release. tree-sitter polls
// cancel every hundred parse actions and gives up when it is non-zero.
static TSTree *bt_parse(bt_pool *pool, const TSLanguage *lang, const char *src, uint32_t len, uint64_t timeout, const size_t *cancel, uint32_t *count, TSParser **pp) {
	// Chunk sizes are powers of two, so chunks kept from one parse fit the
	// next.
	size_t cs = BT_CHUNK_MIN;
	while (cs < (size_t)len * 8 && cs < BT_CHUNK_MAX) cs *= 2;
	pool->chunk_size = cs;
	bt_cur = pool;
	TSParser *p = ts_parser_new();
	ts_parser_set_timeout_micros(p, timeout);
	ts_parser_set_cancellation_flag(p, cancel);
	TSTree *t = NULL;
	if (ts_parser_set_language(p, lang)) {
		t = ts_parser_parse_string(p, NULL, src, len);
	}
	if (t) *count = ts_node_descendant_count(ts_tree_root_node(t));
	bt_cur = NULL;
	*pp = p;
	return t;
}

// bt_release deletes the parser (which frees an external scanner's own
// memory) and drops the pool's contents, tree included.
static void bt_release(bt_pool *pool, TSParser *p) {
	bt_cur = pool;
	ts_parser_delete(p);
	bt_cur = NULL;
	bt_pool_reset(pool);
}

// bt_flatten writes the tree into out (cap records) through a cursor:
// the reference bt_flatten_direct is tested against. While a node is
// open, its last field holds its parent's index, so no stack is needed.
// named[sym] says whether a symbol is named; looking it up beats asking
// the node.
static uint32_t bt_flatten(TSTree *t, const uint8_t *named, uint32_t nsyms, bt_node *out, uint32_t cap) {
	TSNode root = ts_tree_root_node(t);
	// MISSING and ERROR nodes only exist in a tree with errors.
	bool errors = ts_node_has_error(root);
	TSTreeCursor c = ts_tree_cursor_new(root);
	uint32_t n = 0;
	uint32_t cur = UINT32_MAX;
	for (;;) {
		if (n >= cap) break;
		TSNode node = ts_tree_cursor_current_node(&c);
		bt_node *r = &out[n];
		r->start = ts_node_start_byte(node);
		r->end = ts_node_end_byte(node);
		TSSymbol sym = ts_node_symbol(node);
		r->sym = sym;
		uint8_t f = 0;
		if (sym < nsyms ? named[sym] : ts_node_is_named(node)) f |= BT_NAMED;
		if (ts_node_is_extra(node)) f |= BT_EXTRA;
		if (errors) {
			if (sym == (TSSymbol)-1) f |= BT_ERROR | BT_NAMED;
			if (ts_node_is_missing(node)) f |= BT_MISSING;
		}
		r->flags = f;
		uint16_t fid = ts_tree_cursor_current_field_id(&c);
		r->field = fid < 255 ? (uint8_t)fid : 255;
		r->last = cur; // parent, until closed
		cur = n++;
		if (ts_tree_cursor_goto_first_child(&c)) continue;
		// Close finished nodes until one has a next sibling.
		for (;;) {
			uint32_t parent = out[cur].last;
			out[cur].last = n;
			if (ts_tree_cursor_goto_next_sibling(&c)) {
				cur = parent;
				break;
			}
			if (!ts_tree_cursor_goto_parent(&c)) {
				cur = UINT32_MAX;
				break;
			}
			cur = parent;
		}
		if (cur == UINT32_MAX) break;
	}
	// Close anything left open if cap was too small (should not happen).
	while (cur != UINT32_MAX) {
		uint32_t parent = out[cur].last;
		out[cur].last = n;
		cur = parent;
	}
	ts_tree_cursor_delete(&c);
	return n;
}

// bt_fingerprint hashes (FNV-1a, 64 bits) what the public API shows of a
// grammar's tables: ABI version, symbols (names and types), fields, and,
// with states, the state reached from every state on every symbol (a
// walk of states × symbols: a quarter of a second for Go's grammar).
static uint64_t bt_fnv(uint64_t h, const void *p, size_t n) {
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 1099511628211ull;
	}
	return h;
}

static uint64_t bt_fingerprint(const TSLanguage *l, int states) {
	uint64_t h = 14695981039346656037ull;
	uint32_t v[4] = {ts_language_version(l), ts_language_symbol_count(l), ts_language_state_count(l), ts_language_field_count(l)};
	h = bt_fnv(h, v, sizeof v);
	for (uint32_t s = 0; s < v[1]; s++) {
		const char *name = ts_language_symbol_name(l, (TSSymbol)s);
		if (name) h = bt_fnv(h, name, strlen(name) + 1);
		int t = ts_language_symbol_type(l, (TSSymbol)s);
		h = bt_fnv(h, &t, sizeof t);
	}
	for (uint32_t f = 1; f <= v[3]; f++) {
		const char *name = ts_language_field_name_for_id(l, (uint16_t)f);
		if (name) h = bt_fnv(h, name, strlen(name) + 1);
	}
	for (uint32_t st = 0; states && st < v[2] && st < 65535; st++) {
		for (uint32_t s = 0; s < v[1]; s++) {
			uint16_t next = ts_language_next_state(l, (uint16_t)st, (TSSymbol)s);
			h = bt_fnv(h, &next, sizeof next);
		}
	}
	return h;
}

// ---- Flattening without a cursor ----
//
// bt_flatten_direct writes what bt_flatten writes, reading the parse's
// subtrees directly instead of through a TSTreeCursor (which recomputes
// each node's alias, visibility and field from its stack, and copies a
// node per step). The declarations below restate the runtime's data
// layout (subtree.h and the ABI 13/14 TSLanguage of parser.h in the
// go-tree-sitter version go.mod pins); astgrep's TestFlattenDirectEqualsCursor
// holds the two flattens equal over every bundled grammar's test files
// and GOROOT, which a changed layout would fail.

typedef struct { uint32_t row, column; } bt_point;
typedef struct { uint32_t bytes; bt_point extent; } bt_length;

typedef struct {
	bool is_inline : 1;
	bool visible : 1;
	bool named : 1;
	bool extra : 1;
	bool has_changes : 1;
	bool is_missing : 1;
	bool is_keyword : 1;
	uint8_t symbol;
	uint16_t parse_state;
	uint8_t padding_columns;
	uint8_t padding_rows : 4;
	uint8_t lookahead_bytes : 4;
	uint8_t padding_bytes;
	uint8_t size_bytes;
} bt_inline;

typedef struct {
	uint32_t ref_count;
	bt_length padding;
	bt_length size;
	uint32_t lookahead_bytes;
	uint32_t error_cost;
	uint32_t child_count;
	TSSymbol symbol;
	uint16_t parse_state;
	bool visible : 1;
	bool named : 1;
	bool extra : 1;
	bool fragile_left : 1;
	bool fragile_right : 1;
	bool has_changes : 1;
	bool has_external_tokens : 1;
	bool has_external_scanner_state_change : 1;
	bool depends_on_column : 1;
	bool is_missing : 1;
	bool is_keyword : 1;
	// Inner nodes (child_count > 0) only.
	uint32_t visible_child_count;
	uint32_t named_child_count;
	uint32_t visible_descendant_count;
	int32_t dynamic_precedence;
	uint16_t repeat_depth;
	uint16_t production_id;
} bt_heap;

typedef union {
	bt_inline data;
	const bt_heap *ptr;
} bt_subtree;

typedef struct { uint16_t field_id; uint8_t child_index; bool inherited; } bt_field_entry;
typedef struct { uint16_t index; uint16_t length; } bt_field_slice;
typedef struct { bool visible; bool named; bool supertype; } bt_symbol_meta;

typedef struct {
	uint32_t version;
	uint32_t symbol_count;
	uint32_t alias_count;
	uint32_t token_count;
	uint32_t external_token_count;
	uint32_t state_count;
	uint32_t large_state_count;
	uint32_t production_id_count;
	uint32_t field_count;
	uint16_t max_alias_sequence_length;
	const uint16_t *parse_table;
	const uint16_t *small_parse_table;
	const uint32_t *small_parse_table_map;
	const void *parse_actions;
	const char *const *symbol_names;
	const char *const *field_names;
	const bt_field_slice *field_map_slices;
	const bt_field_entry *field_map_entries;
	const bt_symbol_meta *symbol_metadata;
	const TSSymbol *public_symbol_map;
	const uint16_t *alias_map;
	const TSSymbol *alias_sequences;
} bt_language;

static inline uint32_t bt_st_child_count(bt_subtree s) { return s.data.is_inline ? 0 : s.ptr->child_count; }
static inline TSSymbol bt_st_symbol(bt_subtree s) { return s.data.is_inline ? s.data.symbol : s.ptr->symbol; }
static inline bool bt_st_visible(bt_subtree s) { return s.data.is_inline ? s.data.visible : s.ptr->visible; }
static inline bool bt_st_named(bt_subtree s) { return s.data.is_inline ? s.data.named : s.ptr->named; }
static inline bool bt_st_extra(bt_subtree s) { return s.data.is_inline ? s.data.extra : s.ptr->extra; }
static inline bool bt_st_missing(bt_subtree s) { return s.data.is_inline ? s.data.is_missing : s.ptr->is_missing; }
static inline uint32_t bt_st_size(bt_subtree s) { return s.data.is_inline ? s.data.size_bytes : s.ptr->size.bytes; }
static inline uint32_t bt_st_padding(bt_subtree s) { return s.data.is_inline ? s.data.padding_bytes : s.ptr->padding.bytes; }
static inline const bt_subtree *bt_st_children(bt_subtree s) { return (const bt_subtree *)s.ptr - s.ptr->child_count; }

// One level of the walk: the children of a node, visible or hidden.
typedef struct {
	const bt_subtree *kids;
	uint32_t count, i, structural;
	uint32_t pos;            // where child i starts (its padding skipped)
	const TSSymbol *aliases; // by structural index; NULL: none
	const bt_field_entry *fm, *fm_end;
	uint16_t inherit; // the field of visible descendants found through hidden nodes
	uint32_t owner;   // the output node this level closes, or UINT32_MAX (hidden)
} bt_frame;

static inline uint8_t bt_node_flags(const bt_language *l, bt_subtree s, TSSymbol alias, TSSymbol sym, const uint8_t *named, uint32_t nsyms, bool errors) {
	uint8_t f = 0;
	bool isnamed;
	if (sym < nsyms) isnamed = named[sym];
	else if (alias) isnamed = l->symbol_metadata[alias].named;
	else isnamed = bt_st_named(s);
	if (isnamed) f |= BT_NAMED;
	if (bt_st_extra(s)) f |= BT_EXTRA;
	if (errors) {
		if (sym == (TSSymbol)-1) f |= BT_ERROR | BT_NAMED;
		if (bt_st_missing(s)) f |= BT_MISSING;
	}
	return f;
}

static inline TSSymbol bt_public(const bt_language *l, TSSymbol sym) {
	return sym == (TSSymbol)-1 ? sym : l->public_symbol_map[sym];
}

// bt_push opens a level for the children of s (an inner node starting
// at start).
static void bt_push(bt_frame **stack, uint32_t *cap, uint32_t depth, const bt_language *l, bt_subtree s, uint32_t start, uint16_t inherit, uint32_t owner) {
	if (depth == *cap) {
		uint32_t nc = *cap * 2;
		bt_frame *ns = realloc(*stack, nc * sizeof(bt_frame));
		if (ns == NULL) bt_oom(nc * sizeof(bt_frame));
		*stack = ns;
		*cap = nc;
	}
	bt_frame *f = &(*stack)[depth];
	f->count = s.ptr->child_count;
	f->kids = bt_st_children(s);
	f->i = 0;
	f->structural = 0;
	f->pos = start;
	uint16_t prod = s.ptr->production_id;
	f->aliases = prod ? &l->alias_sequences[prod * l->max_alias_sequence_length] : NULL;
	f->fm = f->fm_end = NULL;
	if (l->field_count > 0) {
		bt_field_slice sl = l->field_map_slices[prod];
		f->fm = &l->field_map_entries[sl.index];
		f->fm_end = f->fm + sl.length;
	}
	f->inherit = inherit;
	f->owner = owner;
}

static uint32_t bt_flatten_direct(TSTree *t, const TSLanguage *lang, const uint8_t *named, uint32_t nsyms, bt_node *out, uint32_t cap) {
	const bt_language *l = (const bt_language *)lang;
	TSNode rn = ts_tree_root_node(t);
	bool errors = ts_node_has_error(rn);
	bt_subtree root = *(const bt_subtree *)rn.id;
	if (cap == 0) return 0;
	TSSymbol rsym = bt_public(l, bt_st_symbol(root));
	out[0].start = ts_node_start_byte(rn);
	out[0].end = out[0].start + bt_st_size(root);
	out[0].sym = rsym;
	out[0].flags = bt_node_flags(l, root, 0, rsym, named, nsyms, errors);
	out[0].field = 0;
	out[0].last = 1;
	uint32_t n = 1;
	if (bt_st_child_count(root) == 0) return n;
	uint32_t scap = 64, depth = 0;
	bt_frame *stack = malloc(scap * sizeof(bt_frame));
	if (stack == NULL) bt_oom(scap * sizeof(bt_frame));
	bt_push(&stack, &scap, depth++, l, root, out[0].start, 0, 0);
	while (depth > 0) {
		bt_frame *f = &stack[depth - 1];
		if (f->i == f->count) {
			if (f->owner != UINT32_MAX) out[f->owner].last = n;
			depth--;
			continue;
		}
		bt_subtree c = f->kids[f->i];
		uint32_t start = f->pos;
		bool extra = bt_st_extra(c);
		uint32_t k = f->structural;
		f->i++;
		f->pos = start + bt_st_size(c);
		if (f->i < f->count) f->pos += bt_st_padding(f->kids[f->i]);
		// A node's alias and field come from its parent's production by
		// its index among the parent's non-extra children; a node with no
		// field of its own takes the one of the hidden nodes it was found
		// through.
		TSSymbol alias = 0;
		uint16_t field = 0;
		if (!extra) {
			f->structural++;
			if (f->aliases) alias = f->aliases[k];
			for (const bt_field_entry *e = f->fm; e < f->fm_end; e++) {
				if (!e->inherited && e->child_index == k) {
					field = e->field_id;
					break;
				}
			}
			if (field == 0) field = f->inherit;
		}
		uint32_t kids = bt_st_child_count(c);
		if (bt_st_visible(c) || alias) {
			if (n >= cap) break;
			TSSymbol sym = bt_public(l, alias ? alias : bt_st_symbol(c));
			bt_node *r = &out[n];
			r->start = start;
			r->end = start + bt_st_size(c);
			r->sym = sym;
			r->flags = bt_node_flags(l, c, alias, sym, named, nsyms, errors);
			r->field = field < 255 ? (uint8_t)field : 255;
			r->last = n + 1;
			if (kids > 0) {
				bt_push(&stack, &scap, depth++, l, c, start, 0, n);
			}
			n++;
		} else if (kids > 0 && c.ptr->visible_child_count > 0) {
			bt_push(&stack, &scap, depth++, l, c, start, field, UINT32_MAX);
		}
	}
	// Close anything left open if cap was too small (should not happen).
	while (depth > 0) {
		bt_frame *f = &stack[--depth];
		if (f->owner != UINT32_MAX) out[f->owner].last = n;
	}
	free(stack);
	return n;
}

static void bt_flag_store(size_t *flag, size_t v) {
	__atomic_store_n(flag, v, __ATOMIC_SEQ_CST);
}

static size_t *bt_flag_new(void) {
	size_t *f = calloc(1, sizeof(size_t));
	if (f == NULL) bt_oom(sizeof(size_t));
	return f;
}

static const TSLanguage *bt_call_lang(void *fn) {
	return ((const TSLanguage *(*)(void))fn)();
}
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"unsafe"
)

// Bits of Node.Flags.
const (
	FlagNamed   = C.BT_NAMED
	FlagExtra   = C.BT_EXTRA
	FlagError   = C.BT_ERROR
	FlagMissing = C.BT_MISSING
)

// Node mirrors bt_node: one syntax node of a flattened tree. A tree is a
// []Node in preorder: node i's children are i+1, then each child's Last,
// while below i's Last.
type Node struct {
	Start, End uint32
	Last       uint32 // index one past this node's subtree
	Sym        uint16
	Flags      uint8
	Field      uint8 // field id by which it is its parent's child (0 none, 255 too large)
}

// NodeSize is the bytes one Node takes, for a cache's cost of a tree.
const NodeSize = int64(unsafe.Sizeof(Node{}))

func init() {
	if unsafe.Sizeof(Node{}) != unsafe.Sizeof(C.bt_node{}) {
		panic("tsnative: Node and bt_node differ in size")
	}
}

// Language is a grammar as tree-sitter's runtime sees it: its tables,
// which live as long as the process. The zero Language is none.
type Language struct{ ts *C.TSLanguage }

// Grammar is a loaded language with the per-symbol facts flattening needs.
type Grammar struct {
	ts     *C.TSLanguage
	Named  []uint8          // 1 when the symbol is a named node
	Fields map[string]uint8 // field ids by name (ids past 254 are left out)
}

// NewGrammar reads l's symbol and field tables.
func NewGrammar(l Language) *Grammar {
	ts := l.ts
	n := l.SymbolCount()
	g := &Grammar{ts: ts, Named: make([]uint8, n+1)}
	for i := 0; i < n; i++ {
		if C.ts_language_symbol_type(ts, C.TSSymbol(i)) == 0 {
			g.Named[i] = 1
		}
	}
	g.Fields = map[string]uint8{}
	nf := int(C.ts_language_field_count(ts))
	for i := 1; i <= nf && i < 255; i++ {
		if name := C.ts_language_field_name_for_id(ts, C.uint16_t(i)); name != nil {
			g.Fields[C.GoString(name)] = uint8(i)
		}
	}
	return g
}

func init() { C.bt_install_allocator() }

// Parser is one work slot's (or one pattern reading's) parsing state: the
// memory pool its parses allocate from, and the flag that cancels a parse
// in progress. It is used by one goroutine at a time.
type Parser struct {
	pool   *C.bt_pool
	cancel *C.size_t // C memory: tree-sitter reads it during the parse
}

// parseTimeout stops a grammar that loops on some input from hanging a
// search.
const parseTimeout = 20_000_000 // microseconds

// NewParser makes a parser with its own memory pool; Close frees it.
func NewParser() *Parser {
	return &Parser{pool: C.bt_pool_new(), cancel: C.bt_flag_new()}
}

// Close frees p's pool. A closed parser must not parse again.
func (p *Parser) Close() {
	if p.pool != nil {
		C.bt_pool_delete(p.pool)
		p.pool = nil
		C.free(unsafe.Pointer(p.cancel))
		p.cancel = nil
	}
}

var errParseFailed = errors.New("tree-sitter could not parse the file (timed out or the grammar was rejected)")

// Parse parses src with lang and returns the flattened tree. The nodes go
// into buf (grown when too small), unless keep, given the node count,
// returns a slice of exactly that length to fill instead. The C tree is
// dropped before returning: flat trees are plain Go memory, immutable once
// built and safe to read from any goroutine. When ctx ends mid-parse, the
// parse stops within a hundred parse actions and returns ctx's error.
func (p *Parser) Parse(ctx context.Context, lang *Grammar, src []byte, buf []Node, keep func(count int) []Node) ([]Node, error) {
	if len(src) >= 1<<31 {
		return nil, fmt.Errorf("file too large to parse (%d bytes)", len(src))
	}
	var count C.uint32_t
	ptr := (*C.char)(unsafe.Pointer(&emptySource[0]))
	if len(src) > 0 {
		ptr = (*C.char)(unsafe.Pointer(&src[0]))
	}
	defer p.arm(ctx)()
	var tp *C.TSParser
	t := C.bt_parse(p.pool, lang.ts, ptr, C.uint32_t(len(src)), parseTimeout, p.cancel, &count, &tp)
	defer C.bt_release(p.pool, tp)
	if t == nil {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return nil, errParseFailed
	}
	var out []Node
	if keep != nil {
		out = keep(int(count))
	}
	if out == nil {
		if cap(buf) < int(count) {
			buf = make([]Node, int(count)+int(count)/4)
		}
		out = buf[:int(count)]
	}
	n := C.bt_flatten_direct(t, lang.ts, (*C.uint8_t)(unsafe.Pointer(&lang.Named[0])), C.uint32_t(len(lang.Named)), (*C.bt_node)(unsafe.Pointer(&out[0])), count)
	return out[:int(n)], nil
}

// ParseBothWays parses src and flattens the tree with the cursor and
// without it, for astgrep's test that holds the two equal over its corpus. No timeout: the test
// is about the trees, and under -race on a loaded machine a large file can
// take longer than parseTimeout.
func (p *Parser) ParseBothWays(lang *Grammar, src []byte) (direct, cursor []Node, err error) {
	var count C.uint32_t
	ptr := (*C.char)(unsafe.Pointer(&emptySource[0]))
	if len(src) > 0 {
		ptr = (*C.char)(unsafe.Pointer(&src[0]))
	}
	var tp *C.TSParser
	t := C.bt_parse(p.pool, lang.ts, ptr, C.uint32_t(len(src)), 0, p.cancel, &count, &tp)
	defer C.bt_release(p.pool, tp)
	if t == nil {
		return nil, nil, errParseFailed
	}
	named, nsyms := (*C.uint8_t)(unsafe.Pointer(&lang.Named[0])), C.uint32_t(len(lang.Named))
	direct = make([]Node, int(count))
	n := C.bt_flatten_direct(t, lang.ts, named, nsyms, (*C.bt_node)(unsafe.Pointer(&direct[0])), count)
	direct = direct[:int(n)]
	cursor = make([]Node, int(count))
	n = C.bt_flatten(t, named, nsyms, (*C.bt_node)(unsafe.Pointer(&cursor[0])), count)
	return direct, cursor[:int(n)], nil
}

var emptySource = []byte{0}

// arm makes ctx's end cancel the parse about to run on p, and returns what
// disarms it. An ended ctx sets the flag before the parse (so a large input
// stops at tree-sitter's first check); one that ends later sets it from
// AfterFunc's goroutine.
func (p *Parser) arm(ctx context.Context) func() {
	C.bt_flag_store(p.cancel, 0)
	if ctx.Err() != nil {
		C.bt_flag_store(p.cancel, 1)
		return func() {}
	}
	if ctx.Done() == nil {
		return func() {}
	}
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		C.bt_flag_store(p.cancel, 1)
		close(fired)
	})
	return func() {
		// A store still to come would cancel the next parse.
		if !stop() {
			<-fired
		}
	}
}

// CMemoryBytes is the C memory every parser's pool holds right now.
func CMemoryBytes() int64 { return int64(C.bt_mapped_bytes()) }

// Addr identifies a loaded grammar (for a parse cache's key).
func (l Language) Addr() uintptr { return uintptr(unsafe.Pointer(l.ts)) }

// TableHash hashes the grammar's tables as the public API shows them:
// ABI version, symbols, fields and, with states, its parse table.
func (l Language) TableHash(states bool) uint64 {
	st := C.int(0)
	if states {
		st = 1
	}
	return uint64(C.bt_fingerprint(l.ts, st))
}

func (l Language) version() int { return int(C.ts_language_version(l.ts)) }

// SymbolCount is the number of symbols in l's table.
func (l Language) SymbolCount() int { return int(C.ts_language_symbol_count(l.ts)) }

// SymbolName is the grammar's name of sym ("ERROR" for the error symbol).
func (l Language) SymbolName(sym uint16) string {
	if sym == 0xFFFF {
		return "ERROR"
	}
	s := C.ts_language_symbol_name(l.ts, C.TSSymbol(sym))
	if s == nil {
		return ""
	}
	return C.GoString(s)
}

// SymbolAnonymous reports whether sym is an unnamed token (a keyword or
// punctuation spelled literally in the grammar).
func (l Language) SymbolAnonymous(sym uint16) bool {
	return C.ts_language_symbol_type(l.ts, C.TSSymbol(sym)) == 1
}

// ABI range tree-sitter's runtime accepts.
const (
	MinABI = 13
	MaxABI = 14
)

// LoadShared opens a grammar shared library and returns the language its
// function symbol (tree_sitter_<id>) makes. The library stays loaded.
func LoadShared(path, symbol string) (Language, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	h := C.dlopen(cpath, C.RTLD_NOW|C.RTLD_LOCAL)
	if h == nil {
		return Language{}, fmt.Errorf("dlopen: %s", C.GoString(C.dlerror()))
	}
	csym := C.CString(symbol)
	defer C.free(unsafe.Pointer(csym))
	fn := C.dlsym(h, csym)
	if fn == nil {
		C.dlclose(h)
		return Language{}, fmt.Errorf("the library does not export %s()", symbol)
	}
	// The handle stays open for the life of the process: the language
	// table lives inside the library.
	lang := Language{C.bt_call_lang(fn)}
	if lang.ts == nil {
		return Language{}, fmt.Errorf("%s() returned NULL", symbol)
	}
	if v := lang.version(); v < MinABI || v > MaxABI {
		return Language{}, fmt.Errorf("grammar ABI version %d; this build of tree-sitter accepts %d..%d (regenerate the parser with a matching tree-sitter CLI)", v, MinABI, MaxABI)
	}
	return lang, nil
}

// Bundled returns the grammar linked into the binary under name (the
// symbol suffix go-tree-sitter uses: "go", "csharp", "tsx"), and whether
// there is one.
func Bundled(name string) (Language, bool) {
	f, ok := bundled[name]
	if !ok {
		return Language{}, false
	}
	return Language{f()}, true
}

var bundled = map[string]func() *C.TSLanguage{
	"bash":       func() *C.TSLanguage { return C.tree_sitter_bash() },
	"c":          func() *C.TSLanguage { return C.tree_sitter_c() },
	"cpp":        func() *C.TSLanguage { return C.tree_sitter_cpp() },
	"csharp":     func() *C.TSLanguage { return C.tree_sitter_c_sharp() },
	"css":        func() *C.TSLanguage { return C.tree_sitter_css() },
	"elixir":     func() *C.TSLanguage { return C.tree_sitter_elixir() },
	"go":         func() *C.TSLanguage { return C.tree_sitter_go() },
	"hcl":        func() *C.TSLanguage { return C.tree_sitter_hcl() },
	"html":       func() *C.TSLanguage { return C.tree_sitter_html() },
	"java":       func() *C.TSLanguage { return C.tree_sitter_java() },
	"javascript": func() *C.TSLanguage { return C.tree_sitter_javascript() },
	"kotlin":     func() *C.TSLanguage { return C.tree_sitter_kotlin() },
	"lua":        func() *C.TSLanguage { return C.tree_sitter_lua() },
	"php":        func() *C.TSLanguage { return C.tree_sitter_php() },
	"python":     func() *C.TSLanguage { return C.tree_sitter_python() },
	"ruby":       func() *C.TSLanguage { return C.tree_sitter_ruby() },
	"rust":       func() *C.TSLanguage { return C.tree_sitter_rust() },
	"scala":      func() *C.TSLanguage { return C.tree_sitter_scala() },
	"swift":      func() *C.TSLanguage { return C.tree_sitter_swift() },
	"toml":       func() *C.TSLanguage { return C.tree_sitter_toml() },
	"tsx":        func() *C.TSLanguage { return C.tree_sitter_tsx() },
	"typescript": func() *C.TSLanguage { return C.tree_sitter_typescript() },
	"yaml":       func() *C.TSLanguage { return C.tree_sitter_yaml() },
}

// cLayout describes the tree-sitter structs this package declares itself,
// for the test that holds them against the runtime's own declarations.
func cLayout() map[string]reflect.Type {
	return map[string]reflect.Type{
		"TSNode":       reflect.TypeFor[C.TSNode](),
		"TSTreeCursor": reflect.TypeFor[C.TSTreeCursor](),
	}
}
