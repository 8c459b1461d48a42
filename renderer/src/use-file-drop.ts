import { useEffect, useState } from 'react';

function carriesFiles(event: DragEvent): boolean {
  return event.dataTransfer?.types.includes('Files') ?? false;
}

/**
 * Drag and drop anywhere in the window. Returns whether a file is being dragged over it, for the
 * overlay. Every drop is cancelled so that a file dropped on the page never navigates it.
 */
export function useFileDrop(enabled: boolean, onFile: (file: File) => void): boolean {
  const [over, setOver] = useState(false);
  useEffect(() => {
    // dragenter/dragleave fire for every child element crossed; count them to know when the pointer leaves the window.
    let depth = 0;
    const enter = (event: DragEvent) => {
      if (!carriesFiles(event)) return;
      event.preventDefault();
      depth += 1;
      setOver(enabled);
    };
    const overHandler = (event: DragEvent) => {
      if (!carriesFiles(event)) return;
      event.preventDefault();
      if (event.dataTransfer !== null) event.dataTransfer.dropEffect = enabled ? 'copy' : 'none';
    };
    const leave = () => {
      depth = Math.max(0, depth - 1);
      if (depth === 0) setOver(false);
    };
    const drop = (event: DragEvent) => {
      event.preventDefault();
      depth = 0;
      setOver(false);
      const file = event.dataTransfer?.files[0];
      if (enabled && file !== undefined) onFile(file);
    };
    window.addEventListener('dragenter', enter);
    window.addEventListener('dragover', overHandler);
    window.addEventListener('dragleave', leave);
    window.addEventListener('drop', drop);
    return () => {
      window.removeEventListener('dragenter', enter);
      window.removeEventListener('dragover', overHandler);
      window.removeEventListener('dragleave', leave);
      window.removeEventListener('drop', drop);
    };
  }, [enabled, onFile]);
  return over;
}
