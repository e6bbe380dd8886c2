/** What the timer queue's min-heap orders: due time first, then insertion order. */
export interface HeapEntry {
  /** Monotonic time at which the entry is due (the heap's key). */
  due: number;
  /** Insertion sequence: entries due at the same time run in the order they were queued. */
  readonly seq: number;
  /** Position in the heap, -1 once removed. */
  index: number;
}

const less = (a: HeapEntry, b: HeapEntry): boolean =>
  a.due < b.due || (a.due === b.due && a.seq < b.seq);

/** Adds `entry` to `heap` and sets its `index`. */
export function pushEntry<E extends HeapEntry>(heap: E[], entry: E): void {
  entry.index = heap.length;
  heap.push(entry);
  siftUp(heap, entry.index);
}

/** Removes the entry at position `i`; its `index` becomes -1. */
export function removeEntryAt<E extends HeapEntry>(heap: E[], i: number): void {
  const removed = heap[i]!;
  const last = heap.pop()!;
  removed.index = -1;
  if (last !== removed) {
    heap[i] = last;
    last.index = i;
    siftDown(heap, i);
    siftUp(heap, last.index);
  }
}

/** Restores the heap order after the keys (`due`) of many entries changed. */
export function heapify<E extends HeapEntry>(heap: E[]): void {
  for (let i = (heap.length >> 1) - 1; i >= 0; i--) siftDown(heap, i);
}

function siftUp<E extends HeapEntry>(heap: E[], i: number): void {
  const entry = heap[i]!;
  while (i > 0) {
    const p = (i - 1) >> 1;
    const parent = heap[p]!;
    if (!less(entry, parent)) break;
    heap[i] = parent;
    parent.index = i;
    i = p;
  }
  heap[i] = entry;
  entry.index = i;
}

function siftDown<E extends HeapEntry>(heap: E[], i: number): void {
  const n = heap.length;
  const entry = heap[i]!;
  for (;;) {
    const l = 2 * i + 1;
    if (l >= n) break;
    const r = l + 1;
    const c = r < n && less(heap[r]!, heap[l]!) ? r : l;
    const child = heap[c]!;
    if (!less(child, entry)) break;
    heap[i] = child;
    child.index = i;
    i = c;
  }
  heap[i] = entry;
  entry.index = i;
}
