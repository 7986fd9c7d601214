import { useTitle } from '../hooks';

/** A route no page answers. */
export function Missing() {
  useTitle('Not found');
  return (
    <>
      <h1>Not found</h1>
      <p>
        No such page. <a href="#/">Back to the overview</a>.
      </p>
    </>
  );
}
