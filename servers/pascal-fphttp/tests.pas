{ The server's own tests: date validation, the /work computation against
  contract/fixtures, then the built bin/server over real sockets in both
  threading modes (keep-alive, chunked and split requests, Connection:
  close, the Date header, the mode argument, SIGTERM). Exits 1 on any
  failure. Run from the server's folder, after the build. }
program tests;

{$mode objfpc}{$H+}

uses
  cmem, cthreads, Classes, SysUtils, ctypes, BaseUnix, Sockets, process,
  fpjson, jsonscanner, jsonparser, nbwork;

var
  Failures: Integer = 0;
  Checks: Integer = 0;

procedure Check(Ok: Boolean; const What: AnsiString);
begin
  Inc(Checks);
  if not Ok then
  begin
    Inc(Failures);
    WriteLn('FAIL: ', What);
  end;
end;

{ ---- dates ---- }

procedure TestDates;
const
  Good: array[0..9] of AnsiString = (
    '2020-01-12T10:53:17.773Z', '2000-02-29T12:00:00.000Z',
    '2024-02-29T23:59:59.999Z', '1969-07-20T20:17:40.000Z',
    '1970-01-01T00:00:00.000Z', '0000-01-01T00:00:00.000Z',
    '9999-12-31T23:59:59.999Z', '1600-02-29T00:00:00.000Z',
    '2021-12-31T00:00:00.001Z', '1900-03-01T00:00:00.000Z');
  Bad: array[0..29] of AnsiString = (
    '2020-13-45T99:00:00.000Z', 'yesterday', '',
    '2021-02-29T00:00:00.000Z',   // 29 February of a common year
    '1900-02-29T00:00:00.000Z',   // century, not a leap year
    '2020-01-01T24:00:00.000Z',   // 24:00
    '2020-01-01T00:00:60.000Z',   // leap second
    '2020-01-01T00:60:00.000Z',
    '2020-01-01T00:00:00.+01Z',   // sign in the milliseconds
    '2020-01-01T00:00:00.-01Z',
    '2020-01-01T00:00:00.000+00:00', // offset instead of Z
    '2020-01-01T00:00:00.000+0000',
    '2020-01-01T00:00:00Z',       // no milliseconds
    '2020-01-01T00:00:00.00Z',
    '2020-01-01T00:00:00.0000Z',
    '2020-1-01T00:00:00.000Z',    // one-digit month
    '2020-01-01 00:00:00.000Z',   // space instead of T
    '2020-01-01t00:00:00.000Z', '2020-01-01T00:00:00.000z',
    '2020-00-10T00:00:00.000Z', '2020-01-00T00:00:00.000Z',
    '2020-04-31T00:00:00.000Z', '2020-01-32T00:00:00.000Z',
    '+2020-01-01T00:00:00.000Z', '2020-01-01T00:00:00.000',
    '2020-01-01T00:00:00,000Z', '2020/01/01T00:00:00.000Z',
    ' 2020-01-01T00:00:00.000Z', '2020-01-01T00:00:00.000Z ',
    '２020-01-01T00:00:00.000Z');
var
  S: AnsiString;
  Ms: Int64;
begin
  for S in Good do
  begin
    Check(ParseTimestamp(S, Ms), 'valid date refused: ' + S);
    Check(FormatTimestamp(Ms) = S, 'date does not round-trip: ' + S + ' -> '
      + FormatTimestamp(Ms));
  end;
  Check(ParseTimestamp('1970-01-01T00:00:00.000Z', Ms) and (Ms = 0), 'epoch is 0');
  Check(ParseTimestamp('2020-01-12T10:53:17.773Z', Ms) and (Ms = 1578826397773),
    '2020-01-12T10:53:17.773Z is 1578826397773');
  Check(ParseTimestamp('1969-12-31T23:59:59.999Z', Ms) and (Ms = -1),
    'a millisecond before the epoch is -1');
  for S in Bad do
    Check(not ParseTimestamp(S, Ms), 'invalid date accepted: "' + S + '"');
end;

{ ---- the work against the fixtures ---- }

function JSONEqual(A, B: TJSONData): Boolean;
var
  I: Integer;
  V: TJSONData;
begin
  Result := False;
  if (A = nil) or (B = nil) or (A.JSONType <> B.JSONType) then
    Exit;
  case A.JSONType of
    jtNumber: Result := A.AsFloat = B.AsFloat;
    jtString: Result := A.AsString = B.AsString;
    jtBoolean: Result := A.AsBoolean = B.AsBoolean;
    jtNull: Result := True;
    jtArray:
      begin
        if A.Count <> B.Count then
          Exit;
        for I := 0 to A.Count - 1 do
          if not JSONEqual(A.Items[I], B.Items[I]) then
            Exit;
        Result := True;
      end;
    jtObject:
      begin
        if A.Count <> B.Count then
          Exit;
        for I := 0 to A.Count - 1 do
        begin
          V := TJSONObject(B).Find(TJSONObject(A).Names[I]);
          if not JSONEqual(A.Items[I], V) then
            Exit;
        end;
        Result := True;
      end;
  else
    Result := False;
  end;
end;

function ParseJSON(const S: AnsiString): TJSONData;
var
  P: TJSONParser;
begin
  P := TJSONParser.Create(S, [joUTF8, joStrict]);
  try
    Result := P.Parse;
  finally
    P.Free;
  end;
end;

function FixturePath(const Name: AnsiString): AnsiString;
begin
  Result := '../../contract/fixtures/' + Name;
end;

{ True when Answer is the JSON that the work document Request should get. }
function WorkAnswerIs(const Answer: AnsiString; Expected: TJSONData): Boolean;
var
  Got: TJSONData;
begin
  Result := False;
  try
    Got := ParseJSON(Answer);
  except
    Exit;
  end;
  try
    Result := JSONEqual(Got, Expected);
  finally
    Got.Free;
  end;
end;

procedure TestFixtures;
var
  Lines: TStringList;
  Line, Answer, Name: AnsiString;
  Doc: TJSONData;
  N: Integer;
  Ok: Boolean;
begin
  Lines := TStringList.Create;
  try
    Lines.LoadFromFile(FixturePath('work.jsonl'));
    N := 0;
    for Line in Lines do
    begin
      if Trim(Line) = '' then
        Continue;
      Doc := ParseJSON(Line);
      try
        Name := TJSONObject(Doc).Strings['name'];
        Ok := ComputeWork(TJSONObject(Doc).Objects['request'].AsJSON, Answer);
        Check(Ok, 'work fixture refused: ' + Name + ': ' + Answer);
        Check(WorkAnswerIs(Answer, TJSONObject(Doc).Objects['answer']),
          'work fixture answered wrong: ' + Name + ': ' + Answer);
        Inc(N);
      finally
        Doc.Free;
      end;
    end;
    Check(N >= 4, 'work.jsonl has its cases');

    Lines.LoadFromFile(FixturePath('rejected.jsonl'));
    N := 0;
    for Line in Lines do
    begin
      if Trim(Line) = '' then
        Continue;
      Doc := ParseJSON(Line);
      try
        Name := TJSONObject(Doc).Strings['name'];
        Ok := ComputeWork(TJSONObject(Doc).Strings['body'], Answer);
        Check(not Ok, 'rejected fixture accepted: ' + Name + ': ' + Answer);
        Inc(N);
      finally
        Doc.Free;
      end;
    end;
    Check(N >= 18, 'rejected.jsonl has its cases');
  finally
    Lines.Free;
  end;
  // A few more refusals than the fixtures have.
  Check(not ComputeWork('{"product":"p","requestId":"r","group":{"kind":"k","default":true,"balance":null,"dates":["2020-01-12T10:53:17.773Z"]}}', Answer), 'null balance refused');
  Check(not ComputeWork('{"product":"p","requestId":"r","group":{"kind":"k","default":true,"balance":1,"dates":"2020-01-12T10:53:17.773Z"}}', Answer), 'dates as a string refused');
  Check(not ComputeWork('{"product":"p","requestId":"r","group":{"kind":"k","default":true,"balance":1,"dates":["2020-01-12T10:53:17.773Z"]}} x', Answer), 'trailing garbage refused');
  Check(not ComputeWork('', Answer), 'empty body refused');
  // Same product and requestId, different dates: each its own answer.
  Check(ComputeWork('{"product":"p","requestId":"r","group":{"kind":"k","default":true,"balance":2.5,"dates":["2001-01-01T00:00:00.000Z","1999-12-31T23:59:59.999Z"]}}', Answer)
    and (Pos('"minDate":"1999-12-31T23:59:59.999Z"', Answer) > 0)
    and (Pos('"maxDate":"2001-01-01T00:00:00.000Z"', Answer) > 0), 'min and max dates: ' + Answer);
end;

{ ---- the built server over sockets ---- }

type
  TConn = record
    Fd: cint;
    Buf: AnsiString;
  end;

  TResp = record
    Status: Integer;
    Head: AnsiString;  // header lines, lower-cased, each ending in CRLF
    Body: AnsiString;
  end;

function FreePort: Word;
var
  Fd: cint;
  A: TInetSockAddr;
  L: TSockLen;
begin
  Fd := fpSocket(AF_INET, SOCK_STREAM, 0);
  FillChar(A, SizeOf(A), 0);
  A.sin_family := AF_INET;
  A.sin_addr := StrToNetAddr('127.0.0.1');
  A.sin_port := 0;
  fpBind(Fd, @A, SizeOf(A));
  L := SizeOf(A);
  fpGetSockName(Fd, @A, @L);
  Result := ntohs(A.sin_port);
  CloseSocket(Fd);
end;

function Dial(Port: Word; out C: TConn): Boolean;
var
  A: TInetSockAddr;
  Tv: TTimeVal;
begin
  C.Buf := '';
  C.Fd := fpSocket(AF_INET, SOCK_STREAM, 0);
  FillChar(A, SizeOf(A), 0);
  A.sin_family := AF_INET;
  A.sin_addr := StrToNetAddr('127.0.0.1');
  A.sin_port := htons(Port);
  Result := fpConnect(C.Fd, @A, SizeOf(A)) = 0;
  if not Result then
    CloseSocket(C.Fd)
  else
  begin
    Tv.tv_sec := 5;  // a hung server fails the test instead of hanging it
    Tv.tv_usec := 0;
    fpSetSockOpt(C.Fd, SOL_SOCKET, SO_RCVTIMEO, @Tv, SizeOf(Tv));
  end;
end;

procedure SendAll(var C: TConn; const S: AnsiString);
begin
  if S <> '' then
    fpSend(C.Fd, @S[1], Length(S), MSG_NOSIGNAL);
end;

function More(var C: TConn): Boolean;
var
  B: array[0..16383] of Char;
  R: ssize_t;
  S: AnsiString;
begin
  R := fpRecv(C.Fd, @B[0], SizeOf(B), 0);
  Result := R > 0;
  if Result then
  begin
    SetString(S, PChar(@B[0]), R);
    C.Buf := C.Buf + S;
  end;
end;

function ReadResp(var C: TConn; out R: TResp): Boolean;
var
  P, Len: Integer;
  Lines: TStringList;
  I: Integer;
begin
  R.Status := 0;
  R.Head := '';
  R.Body := '';
  Result := False;
  repeat
    P := Pos(#13#10#13#10, C.Buf);
    if P > 0 then
      Break;
    if not More(C) then
      Exit;
  until False;
  Lines := TStringList.Create;
  try
    Lines.Text := Copy(C.Buf, 1, P - 1);
    Delete(C.Buf, 1, P + 3);
    if (Lines.Count = 0) or (Copy(Lines[0], 1, 9) <> 'HTTP/1.1 ') then
      Exit;
    R.Status := StrToIntDef(Copy(Lines[0], 10, 3), 0);
    Len := -1;
    for I := 1 to Lines.Count - 1 do
    begin
      R.Head := R.Head + LowerCase(Lines[I]) + #13#10;
      if Pos('content-length:', LowerCase(Lines[I])) = 1 then
        Len := StrToIntDef(Trim(Copy(Lines[I], 16, 100)), -1);
    end;
  finally
    Lines.Free;
  end;
  if Len < 0 then
    Exit;  // every answer must carry Content-Length here
  while Length(C.Buf) < Len do
    if not More(C) then
      Exit;
  R.Body := Copy(C.Buf, 1, Len);
  Delete(C.Buf, 1, Len);
  Result := True;
end;

function Request(var C: TConn; const Method, Path, Extra, Body: AnsiString;
  out R: TResp): Boolean;
var
  S: AnsiString;
begin
  S := Method + ' ' + Path + ' HTTP/1.1'#13#10'Host: test'#13#10 + Extra;
  if Body <> '' then
    S := S + 'Content-Type: application/json; charset=utf-8'#13#10
      + 'Content-Length: ' + IntToStr(Length(Body)) + #13#10;
  S := S + #13#10 + Body;
  SendAll(C, S);
  Result := ReadResp(C, R);
end;

function Closed(var C: TConn): Boolean;
var
  B: Char;
begin
  Result := fpRecv(C.Fd, @B, 1, 0) = 0;
end;

{ An IMF-fixdate such as `Sun, 06 Nov 1994 08:49:37 GMT`. }
function HasDate(const Head: AnsiString): Boolean;
var
  P, E: Integer;
  D: AnsiString;
begin
  P := Pos('date: ', Head);
  Result := P > 0;
  if not Result then
    Exit;
  E := P;
  while (E <= Length(Head)) and (Head[E] <> #13) do
    Inc(E);
  D := Copy(Head, P + 6, E - P - 6);
  Result := (Length(D) = 29) and (D[4] = ',') and (Copy(D, 27, 3) = 'gmt')
    and (D[17] = ' ') and (D[20] = ':') and (D[23] = ':');
end;

function StartServer(Port: Word; const Threaded, Arg: AnsiString;
  WaitReady: Boolean = True): TProcess;
var
  C: TConn;
  I: Integer;
begin
  Result := TProcess.Create(nil);
  Result.Executable := ExpandFileName('bin/server');
  Result.Environment.Add('HOST=127.0.0.1');
  Result.Environment.Add('PORT=' + IntToStr(Port));
  if Threaded <> '' then
    Result.Environment.Add('THREADED=' + Threaded);
  if Arg <> '' then
    Result.Parameters.Add(Arg);
  Result.Execute;
  if not WaitReady then
  begin
    Sleep(300);
    Exit;
  end;
  for I := 1 to 100 do
  begin
    if Dial(Port, C) then
    begin
      CloseSocket(C.Fd);
      Exit;
    end;
    Sleep(20);
  end;
end;

{ SIGTERM, then the server must be gone within 3 s. }
procedure StopServer(P: TProcess; const What: AnsiString);
var
  I: Integer;
begin
  fpKill(P.ProcessID, SIGTERM);
  for I := 1 to 60 do
  begin
    if not P.Running then
      Break;
    Sleep(50);
  end;
  Check(not P.Running, What + ': still running 3 s after SIGTERM');
  if P.Running then
    P.Terminate(9);
  P.Free;
end;

const
  WorkDoc = '{"product":"WidgetPro-7","requestId":"5f0c6a3e","group":{"kind":"retail",'
    + '"default":true,"balance":1234.56,"dates":["2020-01-12T10:53:17.773Z",'
    + '"2019-03-01T00:00:00.000Z","2021-07-30T23:59:59.999Z"]}}';
  WorkAnswer = '{"product":"WidgetPro-7","requestId":"5f0c6a3e","client":{'
    + '"balance":1234.56,"minDate":"2019-03-01T00:00:00.000Z",'
    + '"maxDate":"2021-07-30T23:59:59.999Z"}}';

procedure TestServer(const Threaded: AnsiString);
var
  Port: Word;
  P: TProcess;
  C, C2: TConn;
  R: TResp;
  Expected: TJSONData;
  What, Chunked: AnsiString;
  I: Integer;
begin
  What := 'THREADED=' + Threaded;
  Port := FreePort;
  P := StartServer(Port, Threaded, '');
  Expected := ParseJSON(WorkAnswer);
  try
    if not Dial(Port, C) then
    begin
      Check(False, What + ': server does not accept connections');
      Exit;
    end;
    // Several requests on one connection (keep-alive).
    for I := 1 to 3 do
    begin
      Check(Request(C, 'GET', '/blank', '', '', R) and (R.Status = 200)
        and (R.Body = 'OK') and (Pos('content-type: text/plain', R.Head) > 0),
        What + ': GET /blank #' + IntToStr(I) + ': ' + IntToStr(R.Status) + ' ' + R.Body);
      Check(HasDate(R.Head), What + ': no IMF-fixdate Date header: ' + R.Head);
      Check(Pos('connection: close', R.Head) = 0, What + ': keep-alive answer says close');
    end;
    Check(Request(C, 'POST', '/work', '', WorkDoc, R) and (R.Status = 200)
      and (Pos('content-type: application/json', R.Head) > 0)
      and WorkAnswerIs(R.Body, Expected), What + ': POST /work: ' + R.Body);
    Check(Request(C, 'GET', '/echo/abc-1.2_~?q=1', '', '', R) and (R.Status = 200)
      and (R.Body = 'abc-1.2_~'), What + ': echo: ' + R.Body);
    Check(Request(C, 'GET', '/echo', '', '', R) and (R.Status = 404), What + ': /echo is 404');
    Check(Request(C, 'GET', '/', '', '', R) and (R.Status = 404), What + ': / without mode is 404');
    Check(Request(C, 'POST', '/work', '', '{"product": "x", ', R) and (R.Status = 400),
      What + ': bad JSON is 400');
    // A chunked body, in chunks of 16 bytes, with an extension and a trailer.
    Chunked := '';
    I := 1;
    while I <= Length(WorkDoc) do
    begin
      Chunked := Chunked + LowerCase(IntToHex(Length(Copy(WorkDoc, I, 16)), 1));
      if I = 1 then
        Chunked := Chunked + ';ext=1';
      Chunked := Chunked + #13#10 + Copy(WorkDoc, I, 16) + #13#10;
      Inc(I, 16);
    end;
    Chunked := Chunked + '0'#13#10'X-Trailer: 1'#13#10#13#10;
    SendAll(C, 'POST /work HTTP/1.1'#13#10'Host: test'#13#10
      + 'Transfer-Encoding: chunked'#13#10#13#10 + Chunked);
    Check(ReadResp(C, R) and (R.Status = 200) and WorkAnswerIs(R.Body, Expected),
      What + ': chunked POST /work: ' + IntToStr(R.Status) + ' ' + R.Body);
    // Two pipelined requests in one write.
    SendAll(C, 'GET /echo/one HTTP/1.1'#13#10'Host: t'#13#10#13#10
      + 'GET /echo/two HTTP/1.1'#13#10'Host: t'#13#10#13#10);
    Check(ReadResp(C, R) and (R.Body = 'one'), What + ': pipelined 1: ' + R.Body);
    Check(ReadResp(C, R) and (R.Body = 'two'), What + ': pipelined 2: ' + R.Body);
    // Connection: close is answered, announced, and the connection closed.
    Check(Request(C, 'GET', '/blank', 'Connection: close'#13#10, '', R)
      and (R.Status = 200) and (Pos('connection: close', R.Head) > 0),
      What + ': Connection: close answered and announced');
    Check(Closed(C), What + ': connection closed after Connection: close');
    CloseSocket(C.Fd);

    // A request split over three writes, 50 ms apart.
    if Dial(Port, C2) then
    begin
      SendAll(C2, 'POST /work HTTP/1.1'#13#10'Host: t'#13#10'Content-Le');
      Sleep(50);
      SendAll(C2, 'ngth: ' + IntToStr(Length(WorkDoc)) + #13#10#13#10 + Copy(WorkDoc, 1, 20));
      Sleep(50);
      SendAll(C2, Copy(WorkDoc, 21, Length(WorkDoc)));
      Check(ReadResp(C2, R) and (R.Status = 200) and WorkAnswerIs(R.Body, Expected),
        What + ': split request: ' + R.Body);
      // HTTP/1.0 without keep-alive: answered, then closed.
      SendAll(C2, 'GET /blank HTTP/1.0'#13#10#13#10);
      Check(ReadResp(C2, R) and (R.Body = 'OK') and Closed(C2), What + ': HTTP/1.0 closes');
      CloseSocket(C2.Fd);
    end
    else
      Check(False, What + ': second connection refused');
  finally
    Expected.Free;
    StopServer(P, What);
  end;
end;

procedure TestModes;
var
  Port: Word;
  P: TProcess;
  C: TConn;
  R: TResp;
begin
  Port := FreePort;
  P := StartServer(Port, '', '0');
  try
    Check(Dial(Port, C) and Request(C, 'GET', '/', '', '', R) and (R.Status = 200)
      and (R.Body = 'OK'), 'mode 0: GET / is /blank');
    CloseSocket(C.Fd);
  finally
    StopServer(P, 'mode 0');
  end;
  Port := FreePort;
  P := StartServer(Port, '1', '1');
  try
    Check(Dial(Port, C) and Request(C, 'POST', '/', '', WorkDoc, R) and (R.Status = 200)
      and (Pos('"minDate":"2019-03-01T00:00:00.000Z"', R.Body) > 0), 'mode 1: POST / is /work');
    CloseSocket(C.Fd);
  finally
    StopServer(P, 'mode 1');
  end;
  // SIGTERM before any connection was accepted.
  Port := FreePort;
  P := StartServer(Port, '', '', False);
  StopServer(P, 'idle server');
end;

begin
  DefaultSystemCodePage := CP_UTF8;
  TestDates;
  TestFixtures;
  if FileExists('bin/server') then
  begin
    TestServer('');    // the component's default: Threaded = False
    TestServer('1');
    TestModes;
  end
  else
    Check(False, 'bin/server is not built');
  WriteLn(Checks, ' checks, ', Failures, ' failed');
  if Failures > 0 then
    Halt(1);
end.
