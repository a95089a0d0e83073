{ netbench server on the Free Pascal FCL's fphttpserver (TFPHttpServer).

  Environment: HOST (IPv4 address, default 127.0.0.1), PORT (default 1234),
  THREADED: unset = the component's default (Threaded = False), 1 = a thread
  per connection, 0 = one thread serves the connections one after another.
  Optional first argument: 0 makes GET / act as /blank, 1 makes POST / act
  as /work. SIGTERM stops accepting and exits. }
program server;

{$mode objfpc}{$H+}

uses
  cmem,      // first: every Pascal heap allocation goes through libc malloc/free
  cthreads,  // POSIX threads for TThread (Threaded = True)
  SysUtils, ctypes, BaseUnix, Sockets,
  httpdefs, fphttpserver,
  nbwork, nbhttp;

type
  THandler = class
    Mode: Integer;  // -1: no mode argument; 0 or 1 as CONTRACT.md says
    procedure OnRequest(Sender: TObject; var ARequest: TFPHTTPConnectionRequest;
      var AResponse: TFPHTTPConnectionResponse);
  end;

procedure THandler.OnRequest(Sender: TObject; var ARequest: TFPHTTPConnectionRequest;
  var AResponse: TFPHTTPConnectionResponse);
var
  R: TNbResponse;
  Path, Method, Answer: AnsiString;
begin
  R := AResponse as TNbResponse;
  Path := ARequest.PathInfo;   // the URL without its query string
  Method := ARequest.Method;
  if (Method = 'GET') and ((Path = '/blank') or ((Path = '/') and (Mode = 0))) then
    R.Answer(200, 'text/plain', 'OK')
  else if (Method = 'POST') and ((Path = '/work') or ((Path = '/') and (Mode = 1))) then
  begin
    if ComputeWork(ARequest.Content, Answer) then
      R.Answer(200, 'application/json', Answer)
    else
      R.Answer(400, 'text/plain', Answer);
  end
  else if (Method = 'GET') and (Copy(Path, 1, 6) = '/echo/') then
    R.Answer(200, 'text/plain', Copy(Path, 7, Length(Path)))
  else
    R.Answer(404, 'text/plain', 'Not Found');
end;

procedure OnSigTerm(Sig: cint); cdecl;
begin
  Terminating := True;
  if ListenFD >= 0 then
    // Wakes the accepting thread (accept fails on a shut-down socket); a
    // connection waiting in recv or poll gets EINTR and sees Terminating.
    fpShutdown(ListenFD, SHUT_RDWR)
  else
    // Nothing accepted yet, so nothing in flight; accept() itself is
    // retried on EINTR by ssockets, so leave directly.
    fpExit(0);
end;

procedure InstallSignals;
var
  Act: SigActionRec;
begin
  FillChar(Act, SizeOf(Act), 0);
  Act.sa_handler := SigActionHandler(@OnSigTerm);
  Act.sa_flags := 0;  // no SA_RESTART: blocking calls return EINTR
  fpSigAction(SIGTERM, @Act, nil);
  fpSigAction(SIGINT, @Act, nil);
  FillChar(Act, SizeOf(Act), 0);
  Act.sa_handler := SigActionHandler(SIG_IGN);
  fpSigAction(SIGPIPE, @Act, nil);
end;

function Fail(const Msg: AnsiString): Boolean;
begin
  WriteLn(StdErr, 'server: ', Msg);
  Flush(StdErr);
  Halt(2);
  Result := False;
end;

{ True for a dotted IPv4 address: fphttpserver 3.2.2 listens with
  ssockets' TInetServer, which is AF_INET only. }
function IsIPv4(const S: AnsiString): Boolean;
var
  Parts, I, N, Digits: Integer;
begin
  Parts := 1;
  N := 0;
  Digits := 0;
  Result := False;
  for I := 1 to Length(S) do
    case S[I] of
      '0'..'9':
        begin
          N := N * 10 + Ord(S[I]) - Ord('0');
          Inc(Digits);
          if (N > 255) or (Digits > 3) then
            Exit;
        end;
      '.':
        begin
          if Digits = 0 then
            Exit;
          Inc(Parts);
          N := 0;
          Digits := 0;
        end;
    else
      Exit;
    end;
  Result := (Parts = 4) and (Digits > 0);
end;

var
  Srv: TNbServer;
  Handler: THandler;
  Host, PortText, Threaded: AnsiString;
  Port: Integer;
begin
  DefaultSystemCodePage := CP_UTF8;  // JSON strings are UTF-8 bytes, as received
  Host := GetEnvironmentVariable('HOST');
  if Host = '' then
    Host := '127.0.0.1';
  PortText := GetEnvironmentVariable('PORT');
  if PortText = '' then
    PortText := '1234';
  Port := StrToIntDef(PortText, -1);
  if (Port < 1) or (Port > 65535) then
    Fail('PORT must be 1-65535, not "' + PortText + '"');
  if not IsIPv4(Host) then
    Fail('HOST "' + Host + '" is not an IPv4 address; fphttpserver 3.2.2 '
      + '(ssockets TInetServer) listens on IPv4 only');

  Handler := THandler.Create;
  Handler.Mode := -1;
  if ParamCount >= 1 then
    if ParamStr(1) = '0' then
      Handler.Mode := 0
    else if ParamStr(1) = '1' then
      Handler.Mode := 1
    else
      Fail('the optional argument is 0 or 1, not "' + ParamStr(1) + '"');

  Srv := TNbServer.Create(nil);
  Srv.Address := Host;
  Srv.Port := Port;
  Threaded := GetEnvironmentVariable('THREADED');
  if Threaded = '1' then
    Srv.Threaded := True
  else if Threaded = '0' then
    Srv.Threaded := False
  else if Threaded <> '' then
    Fail('THREADED is 0 or 1, not "' + Threaded + '"');
  Srv.OnRequest := @Handler.OnRequest;

  InstallSignals;
  try
    Srv.Active := True;  // binds, listens and accepts until stopped
  except
    on E: Exception do
      if not Terminating then
        Fail(E.ClassName + ': ' + E.Message);
  end;
  // Stopped by SIGTERM. Connection threads (Threaded) may still be blocked
  // in recv on kept connections; the process ends them by exiting.
  fpExit(0);
end.
