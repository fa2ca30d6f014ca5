// "Copy" buttons: put the text of the element named by data-copy on the clipboard.
document.addEventListener("click", (event) => {
  const button = event.target.closest("button.copy");
  if (!button) return;
  const source = document.getElementById(button.dataset.copy);
  if (!source || !navigator.clipboard) return;
  navigator.clipboard.writeText(source.innerText.trim()).then(
    () => { button.textContent = "Copied"; setTimeout(() => { button.textContent = "Copy"; }, 1500); },
    () => { button.textContent = "Select and copy"; });
});
