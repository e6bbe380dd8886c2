/**
 * Wraps `read` so that it runs once per options object: the suite reads a backend's
 * capabilities once and every scenario registered with the same options shares the answer. A
 * failed read is forgotten, so the next scenario tries again (and reports its own failure).
 */
export function onceWithOptions<O extends object, T>(
  read: (options: O) => Promise<T>,
): (options: O) => Promise<T> {
  const answers = new WeakMap<O, Promise<T>>();
  return (options) => {
    let answer = answers.get(options);
    if (!answer) {
      answer = read(options);
      answers.set(options, answer);
      answer.catch(() => answers.delete(options));
    }
    return answer;
  };
}
