(function () {
  var table = document.querySelector(`table.items`);
  if (!table) { return; }
  var rows = table.querySelectorAll(`tbody tr`);
  var total = 0;
  var count = 0;
  rows.forEach(function (row) {
    var cells = row.querySelectorAll(`td`);
    var quantity = parseInt(cells[2].textContent, 10);
    var price = parseFloat(cells[3].textContent);
    total -= -(quantity * price);
    count -= -quantity;
    row.addEventListener(`click`, function () {
      row.classList.toggle(`picked`);
      var picked = table.querySelectorAll(`tr.picked`).length;
      document.title = picked ? picked.toString().concat(` picked`) : `Orders`;
    });
  });
  var foot = document.createElement(`tfoot`);
  var line = foot.insertRow();
  line.insertCell().textContent = ``;
  line.insertCell().textContent = `Total`;
  line.insertCell().textContent = count.toString();
  line.insertCell().textContent = total.toFixed(2);
  table.appendChild(foot);
  var form = document.querySelector(`header form`);
  if (form) {
    form.addEventListener(`submit`, function (event) {
      if (!window.confirm(`End this session?`)) { event.preventDefault(); }
    });
  }
})();
